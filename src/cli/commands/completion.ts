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

/**
 * Where the DAGs are, as the shell finds them: --dags or --home on the line being completed, else
 * TROUPE_DAGS, TROUPE_HOME, ~/.troupe. `dags` and `home` are the shell variables the script sets
 * from the line (a leading ~ expanded). A dagsDir set in config.yaml is not read.
 */
const DAGS_DIR = '${dags:-${TROUPE_DAGS:-${home:-${TROUPE_HOME:-$HOME/.troupe}}/dags}}';

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
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" verb="\${COMP_WORDS[1]}" flags="" dags="" home="" i
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${verbs.map((verb) => verb.name).join(' ')}" -- "$cur") )
    return
  fi
  case "$prev" in
    --dags|--home) COMPREPLY=( $(compgen -d -- "$cur") ); return ;;
    --config) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
  esac
  case "$verb" in
${cases}
  esac
  for (( i = 2; i < COMP_CWORD; i++ )); do
    case "\${COMP_WORDS[i]}" in
      # bash splits --dags=DIR into three words: --dags, =, DIR.
      --dags) dags="\${COMP_WORDS[i+1]}"; [ "$dags" = "=" ] && dags="\${COMP_WORDS[i+2]}" ;;
      --home) home="\${COMP_WORDS[i+1]}"; [ "$home" = "=" ] && home="\${COMP_WORDS[i+2]}" ;;
    esac
  done
  dags="\${dags/#\\~/$HOME}" home="\${home/#\\~/$HOME}"
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
  local -a verbs flags names
  local dags="" home="" i
  verbs=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'troupe verb' verbs
    return
  fi
  case "\${words[CURRENT-1]}" in
    --dags|--home) _files -/; return ;;
    --config) _files; return ;;
  esac
  case "\${words[2]}" in
${cases}
  esac
  for (( i = 3; i < CURRENT; i++ )); do
    case "\${words[i]}" in
      --dags) dags="\${words[i+1]}" ;;
      --dags=*) dags="\${words[i]#--dags=}" ;;
      --home) home="\${words[i+1]}" ;;
      --home=*) home="\${words[i]#--home=}" ;;
    esac
  done
  dags="\${dags/#\\~/$HOME}" home="\${home/#\\~/$HOME}"
  if [[ "\${words[CURRENT]}" == -* ]]; then
    compadd -- $flags
  else
    names=(${DAGS_DIR}/*.y(a|)ml(N:t:r))
    compadd -- $names
    _files -g '*.y(a|)ml'
  fi
}
compdef _troupe troupe
`;
}
