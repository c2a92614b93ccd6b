{
  "targets": [
    {
      "target_name": "troupe_spawn",
      "sources": ["native/spawn.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "conditions": [["OS!='linux'", {"type": "none", "sources!": ["native/spawn.c"]}]]
    }
  ]
}
