// `troupe completion bash|zsh`: a completion script for the shell, made from the parser's own list
// of verbs and flags, so it never falls behind them. DAG names come from the DAGs folder.
import type { Command } from 'commander';
import { UsageError } from '../errors.ts';

interface Verb {
  name: string;
  summary: string;
  flags: string[];
}

function verbsOf(program: Command): Verb[] {
  return program.commands.map((command) => ({
    name: command.name(),
    summary: command.summary() || command.description().split('\n')[0],
    flags: command.options.flatMap((option) => [option.short, option.long].filter((flag): flag is string => flag !== undefined)).concat('--help'),
  }));
}

/** Where the DAGs are, as the shell finds them: --dags is not read, TROUPE_DAGS and TROUPE_HOME are. */
const DAGS_DIR = '${TROUPE_DAGS:-${TROUPE_HOME:-$HOME/.troupe}/dags}';

export function completion(shell: string, program: Command): string {
  const verbs = verbsOf(program);
  if (shell === 'bash') return bash(verbs);
  if (shell === 'zsh') return zsh(verbs);
  throw new UsageError(`no completion for shell "${shell}": bash and zsh are supported`, 'completion');
}

function bash(verbs: Verb[]): string {
  const cases = verbs.map((verb) => `    ${verb.name}) flags="${verb.flags.join(' ')}" ;;`).join('\n');
  return `# troupe completion for bash: add \`source <(troupe completion bash)\` to ~/.bashrc
_troupe() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" verb="\${COMP_WORDS[1]}" flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${verbs.map((verb) => verb.name).join(' ')}" -- "$cur") )
    return
  fi
  case "$verb" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
  else
    local dags
    dags=$(ls "${DAGS_DIR}" 2>/dev/null | sed -n 's/\\.ya\\{0,1\\}ml$//p')
    COMPREPLY=( $(compgen -W "$dags" -- "$cur") $(compgen -f -X '!*.y*ml' -- "$cur") )
  fi
}
complete -o filenames -F _troupe troupe
`;
}

function zsh(verbs: Verb[]): string {
  const described = verbs.map((verb) => `    '${verb.name}:${verb.summary.replace(/'/g, `'\\''`).replace(/:/g, '\\:')}'`).join('\n');
  const cases = verbs.map((verb) => `    ${verb.name}) flags=(${verb.flags.join(' ')}) ;;`).join('\n');
  return `#compdef troupe
# troupe completion for zsh: add \`source <(troupe completion zsh)\` to ~/.zshrc (after compinit)
_troupe() {
  local -a verbs flags dags
  verbs=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'troupe verb' verbs
    return
  fi
  case "\${words[2]}" in
${cases}
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then
    compadd -- $flags
  else
    dags=(${DAGS_DIR}/*.y(a|)ml(N:t:r))
    compadd -- $dags
    _files -g '*.y(a|)ml'
  fi
}
compdef _troupe troupe
`;
}
