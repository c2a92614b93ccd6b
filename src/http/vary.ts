// Vary lists every request header an answer depends on: each part of the server that adds one
// (the encoding, CORS's origin) adds it to what is there.

/** `vary` with `name` added, unless it lists it already (any case). */
export function varyAlso(vary: string | undefined, name: string): string {
  if (!vary) return name;
  return vary.split(',').some((entry) => entry.trim().toLowerCase() === name.toLowerCase()) ? vary : `${vary}, ${name}`;
}
