#!/usr/bin/env zsh
# Drives zsh's real completion system the way a user does: an interactive zsh on a
# pseudo-terminal (zsh/zpty), compinit with the given completion function on $fpath, the
# command line typed and TAB pressed. Prints the matches the completion offered (every word
# compadd accepted for the current prefix), sorted, one per line.
# Usage: zsh -f complete.zsh COMPLETION_FILE 'cudatool devices --min-c'
emulate -L zsh
setopt err_exit
zmodload zsh/zpty
local script=$1 line=$2
local dir=$(mktemp -d "${TMPDIR:-/tmp}/cudatool-zsh-XXXXXX")
cp -- $script $dir/_cudatool
local matches=$dir/matches
: >$matches
zpty -b complete 'zsh -f -i'
zpty -w complete "PS1='' PS2='' RPS1=''; LISTMAX=100000; unsetopt beep zle_bell 2>/dev/null"
zpty -w complete "fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -d $dir/zcompdump"
zpty -w complete "zstyle ':completion:*' list-prompt ''; zstyle ':completion:*' select-prompt ''"
# Record what each compadd call would add (matching the current prefix), then add it as
# usual. Calls that already collect their matches (-O, -A, -D) are internal: left alone.
zpty -w complete "compadd() { if (( \${@[(I)-[OAD]]} )); then builtin compadd \"\$@\"; return; fi;
  local -a __m; builtin compadd -O __m \"\$@\"; (( \$#__m )) && print -rl -- \$__m >>$matches;
  builtin compadd \"\$@\"; }"
# Wait for the setup to finish and the line editor to show its prompt: input that arrives
# while zsh starts the line editor can be dropped with the terminal's pending input.
zpty -w complete 'PS1="zle-ready> "; print ${:-setup}-done'
local out
zpty -r -m complete out '*setup-done*zle-ready> *'
zpty -w -n complete "$line"$'\t'
zpty -w complete $'\C-u''print ${:-complete}-done'
zpty -r -m complete out '*complete-done*'

zpty -d complete
sort -u $matches
rm -rf -- $dir
