import { Argument, type Command } from 'commander';
import type { LocalLeaf } from './action.js';

/**
 * `shoal completion bash|zsh|fish`: a completion script generated from the command tree itself,
 * so it can never drift from the commands (clap_complete does the same for the reference CLI).
 * Commands, aliases, flags, flag values with fixed choices (`--output`, `--kind`, ...) and file
 * names for file flags complete in all three shells.
 *
 *   eval "$(shoal completion bash)"                          # or save to /etc/bash_completion.d/shoal
 *   shoal completion zsh > "${fpath[1]}/_shoal"              # then: autoload -U compinit && compinit
 *   shoal completion fish > ~/.config/fish/completions/shoal.fish
 *
 * Hand-written rather than a library: commander has no completion of its own, and the packages
 * that add one (tabtab, omelette) call back into the program on every <Tab> (a Node start per
 * key press) and are barely maintained; a static script from the tree is faster and has no
 * dependency. Each script walks the words typed so far (skipping flags and their values) to the
 * command they name, then offers that command's subcommands or flags.
 */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface FlagSpec {
  readonly short: string | null;
  readonly long: string;
  readonly takesValue: boolean;
  readonly choices: readonly string[];
  readonly file: boolean;
  readonly description: string;
}

interface NodeSpec {
  /** Canonical path, space separated: "shoal message send". */
  readonly path: string;
  readonly children: readonly { readonly names: readonly string[]; readonly path: string; readonly description: string }[];
  readonly flags: readonly FlagSpec[];
  /** Fixed choices of the command's first argument (`completion <shell>`). */
  readonly argumentChoices: readonly string[];
}

const FILE_FLAG = /file|config|dir/i;

/** The command tree as plain data (exported for tests). */
export function commandTree(program: Command): NodeSpec[] {
  const nodes: NodeSpec[] = [];
  const visit = (command: Command, path: string): void => {
    const children = command.commands.map((child) => ({ names: [child.name(), ...child.aliases()], path: `${path} ${child.name()}`, description: child.description() }));
    const flags: FlagSpec[] = command.options.filter((o) => o.long !== undefined && !o.hidden).map((o) => ({
      short: o.short ?? null,
      long: o.long as string,
      takesValue: o.required || o.optional,
      choices: o.argChoices ?? [],
      file: (o.required || o.optional) && FILE_FLAG.test(o.long as string),
      description: o.description,
    }));
    flags.push({ short: '-h', long: '--help', takesValue: false, choices: [], file: false, description: 'show help' });
    if (command.parent === null) {
      flags.push({ short: '-V', long: '--version', takesValue: false, choices: [], file: false, description: 'print the version' });
      children.push({ names: ['help'], path: `${path} help`, description: 'help for a command' });
    }
    nodes.push({ path, children, flags, argumentChoices: command.registeredArguments[0]?.argChoices ?? [] });
    for (const child of command.commands) visit(child, `${path} ${child.name()}`);
  };
  visit(program, program.name());
  return nodes;
}

const words = (items: readonly string[]): string => items.join(' ');

/** Case-statement helpers shared by bash and zsh (the same POSIX `case` syntax). */
function shellHelpers(name: string, nodes: readonly NodeSpec[]): string {
  const fn = `_${name}`;
  const child = nodes.flatMap((n) => n.children.map((c) => `    ${c.names.map((alias) => `"${n.path} ${alias}"`).join('|')}) echo "${c.path}" ;;`));
  const commands = nodes.filter((n) => n.children.length > 0 || n.argumentChoices.length > 0)
    .map((n) => `    "${n.path}") echo "${words(n.children.length > 0 ? n.children.flatMap((c) => c.names.slice(0, 1)) : n.argumentChoices)}" ;;`);
  const flags = nodes.map((n) => `    "${n.path}") echo "${words(n.flags.flatMap((f) => (f.short === null ? [f.long] : [f.long, f.short])))}" ;;`);
  const valued = nodes.flatMap((n) => n.flags.filter((f) => f.takesValue).map((f) => `    ${[f.long, ...(f.short === null ? [] : [f.short])].map((flag) => `"${n.path} ${flag}"`).join('|')}) return 0 ;;`));
  const choices = nodes.flatMap((n) => n.flags.filter((f) => f.choices.length > 0 || f.file).map((f) => {
    const value = f.choices.length > 0 ? words(f.choices) : '__files__';
    return `    ${[f.long, ...(f.short === null ? [] : [f.short])].map((flag) => `"${n.path} ${flag}"`).join('|')}) echo "${value}" ;;`;
  }));
  const caseOf = (args: string, body: readonly string[], fallback: string): string => `  case "${args}" in\n${body.join('\n')}\n    *) ${fallback} ;;\n  esac`;
  return [
    `${fn}_child() {\n${caseOf('$1 $2', child, 'echo ""')}\n}`,
    `${fn}_commands() {\n${caseOf('$1', commands, 'echo ""')}\n}`,
    `${fn}_flags() {\n${caseOf('$1', flags, 'echo ""')}\n}`,
    `${fn}_takes_value() {\n${caseOf('$1 $2', valued, 'return 1')}\n}`,
    `${fn}_values() {\n${caseOf('$1 $2', choices, 'echo ""')}\n}`,
    // Walks words[first..current-1] to the command they name (bash and zsh index differently).
    `${fn}_node() {
  local node="${name}" skip=0 word next
  for word in "$@"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case "$word" in
      -*=*) continue ;;
      -*) if ${fn}_takes_value "$node" "$word"; then skip=1; fi; continue ;;
    esac
    next="$(${fn}_child "$node" "$word")"
    if [ -n "$next" ]; then node="$next"; fi
  done
  echo "$node"
}`,
  ].join('\n\n');
}

function bashScript(name: string, nodes: readonly NodeSpec[]): string {
  const fn = `_${name}`;
  return `# ${name} completion for bash (generated by \`${name} completion bash\`)
${shellHelpers(name, nodes)}

${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" node values
  if [ "$COMP_CWORD" -gt 0 ]; then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  node="$(${fn}_node "\${COMP_WORDS[@]:1:COMP_CWORD-1}")"
  if [ "$COMP_CWORD" -gt 1 ] && ${fn}_takes_value "$node" "$prev"; then
    values="$(${fn}_values "$node" "$prev")"
    if [ "$values" = "__files__" ]; then COMPREPLY=($(compgen -f -- "$cur")); else COMPREPLY=($(compgen -W "$values" -- "$cur")); fi
    return 0
  fi
  case "$cur" in
    -*) COMPREPLY=($(compgen -W "$(${fn}_flags "$node")" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "$(${fn}_commands "$node")" -- "$cur")) ;;
  esac
  return 0
}
complete -F ${fn} ${name}
`;
}

function zshScript(name: string, nodes: readonly NodeSpec[]): string {
  const fn = `_${name}`;
  return `#compdef ${name}
# ${name} completion for zsh (generated by \`${name} completion zsh\`)
${shellHelpers(name, nodes)}

${fn}() {
  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" node values
  local -a candidates
  node="$(${fn}_node "\${(@)words[2,CURRENT-1]}")"
  if (( CURRENT > 2 )) && ${fn}_takes_value "$node" "$prev"; then
    values="$(${fn}_values "$node" "$prev")"
    if [[ "$values" == "__files__" ]]; then _files; return; fi
    candidates=(\${=values})
  elif [[ "$cur" == -* ]]; then
    candidates=(\${=$(${fn}_flags "$node")})
  else
    candidates=(\${=$(${fn}_commands "$node")})
  fi
  compadd -- "\${(@)candidates}"
}

if (( $+functions[compdef] )); then compdef ${fn} ${name}; fi
`;
}

const fishQuote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishScript(name: string, nodes: readonly NodeSpec[]): string {
  const fn = `__${name}`;
  const child = nodes.flatMap((n) => n.children.map((c) => `    case ${c.names.map((alias) => fishQuote(`${n.path} ${alias}`)).join(' ')}\n      echo ${fishQuote(c.path)}`));
  const valued = nodes.flatMap((n) => n.flags.filter((f) => f.takesValue).map((f) => `    case ${[f.long, ...(f.short === null ? [] : [f.short])].map((flag) => fishQuote(`${n.path} ${flag}`)).join(' ')}\n      return 0`));
  const lines: string[] = [
    `# ${name} completion for fish (generated by \`${name} completion fish\`)`,
    `function ${fn}_child\n  switch "$argv[1] $argv[2]"\n${child.join('\n')}\n  end\nend`,
    `function ${fn}_takes_value\n  switch "$argv[1] $argv[2]"\n${valued.join('\n')}\n  end\n  return 1\nend`,
    `function ${fn}_node
  set -l node ${name}
  set -l skip 0
  for word in (commandline -opc)[2..-1]
    if test $skip = 1
      set skip 0
      continue
    end
    switch $word
      case '-*=*'
        continue
      case '-*'
        if ${fn}_takes_value $node $word
          set skip 1
        end
        continue
    end
    set -l next (${fn}_child $node $word)
    if test -n "$next"
      set node $next
    end
  end
  echo $node
end`,
    `complete -c ${name} -f`,
  ];
  for (const n of nodes) {
    const when = `-n ${fishQuote(`test (${fn}_node) = ${fishQuote(n.path)}`)}`;
    for (const c of n.children) lines.push(`complete -c ${name} ${when} -a ${fishQuote(c.names[0] ?? '')} -d ${fishQuote(c.description)}`);
    if (n.children.length === 0 && n.argumentChoices.length > 0) lines.push(`complete -c ${name} ${when} -a ${fishQuote(words(n.argumentChoices))}`);
    for (const f of n.flags) {
      const short = f.short === null ? '' : ` -s ${f.short.slice(1)}`;
      const value = f.choices.length > 0 ? ` -x -a ${fishQuote(words(f.choices))}` : f.file ? ' -r -F' : f.takesValue ? ' -x' : '';
      lines.push(`complete -c ${name} ${when} -l ${f.long.slice(2)}${short}${value} -d ${fishQuote(f.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  const nodes = commandTree(program);
  const name = program.name();
  switch (shell) {
    case 'bash': return bashScript(name, nodes);
    case 'zsh': return zshScript(name, nodes);
    case 'fish': return fishScript(name, nodes);
  }
}

export function registerCompletion(program: Command, leaf: LocalLeaf): void {
  leaf(program.command('completion').description('print a shell completion script: bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS)), async (ctx, shell) => {
    ctx.io.stdout(completionScript(program, String(shell) as Shell));
  });
}
