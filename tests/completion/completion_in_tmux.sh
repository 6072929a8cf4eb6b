#!/usr/bin/env bash
# Completion as a user meets it: an interactive SHELL (bash, zsh or fish) in tmux, with the
# script `cudatool completion SHELL` prints loaded, a partial command line typed, one Tab
# pressed (send-keys), and the command line read back from the screen (capture-pane).
# Checks that values complete (architectures from the table, formats, sort columns,
# backends, compilers), that FILE arguments complete to file names, that no "-" is inserted
# where a value or a file is expected, and that fish offers no files for --arch.
# Usage: completion_in_tmux.sh SHELL CUDATOOL. Exit 77 (skipped) without tmux or SHELL.
set -uo pipefail
shell=$1 cudatool=$2
command -v tmux >/dev/null || { echo "tmux is not installed: skipped"; exit 77; }
command -v "$shell" >/dev/null || { echo "$shell is not installed: skipped"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cudatool-tmux-XXXXXX")
socket=$work/tmux.socket
cleanup() { tmux -S "$socket" kill-server 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/bin" "$work/home" "$work/files"
ln -s "$cudatool" "$work/bin/cudatool"
# The only file where the lines are typed: a FILE argument completes to it in one Tab.
: >"$work/files/sample.cu"
"$cudatool" completion "$shell" >"$work/completion.$shell" || exit 1

case $shell in
  bash)
    cat >"$work/rc" <<EOF
PS1='$ '
source "$work/completion.bash"
EOF
    start=(bash --noprofile --rcfile "$work/rc" -i) ;;
  zsh)
    cat >"$work/home/.zshrc" <<EOF
PS1='$ '
autoload -Uz compinit && compinit -u -d "$work/zcompdump"
source "$work/completion.zsh"
EOF
    start=(zsh -i) ;;
  fish)
    mkdir -p "$work/home/.config/fish"
    cat >"$work/home/.config/fish/config.fish" <<EOF
function fish_prompt; echo -n '\$ '; end
function fish_greeting; end
source "$work/completion.fish"
EOF
    start=(fish -i) ;;
  *) echo "unknown shell $shell" >&2; exit 2 ;;
esac

tmux -S "$socket" -f /dev/null new-session -d -s t -x 200 -y 50 -c "$work/files" \
  env -i HOME="$work/home" ZDOTDIR="$work/home" PATH="$work/bin:/usr/bin:/bin" TERM=xterm-256color \
  XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" "${start[@]}"

screen() { tmux -S "$socket" capture-pane -p -t t; }
# The last line that shows a prompt: the command line being edited.
command_line() { screen | grep -E '^\$( |$)' | tail -1; }
wait_for_prompt() {
  for _ in $(seq 100); do
    [ -n "$(command_line)" ] && return 0
    sleep 0.1
  done
  echo "$shell: no prompt after 10 s:"; screen; return 1
}

failures=0
# check TYPED EXPECTED_LINE [NOT_ON_SCREEN]: types TYPED, presses Tab once, and expects the
# command line to read EXPECTED_LINE (trailing blanks ignored) and NOT_ON_SCREEN nowhere.
check() {
  local typed=$1 expected=$2 absent=${3:-} line=""
  tmux -S "$socket" send-keys -t t -l "$typed"
  sleep 0.3
  tmux -S "$socket" send-keys -t t Tab
  for _ in $(seq 30); do
    sleep 0.1
    line=$(command_line | sed 's/[[:space:]]*$//')
    [ "$line" = "\$ $expected" ] && break
  done
  if [ "$line" != "\$ $expected" ]; then
    echo "FAIL $shell: '$typed' + Tab gives '$line', expected '\$ $expected'"
    screen | sed 's/^/    | /'
    failures=$((failures + 1))
  elif [ -n "$absent" ] && screen | grep -qF -- "$absent"; then
    echo "FAIL $shell: '$typed' + Tab shows '$absent'"
    screen | sed 's/^/    | /'
    failures=$((failures + 1))
  else
    echo "ok   $shell: '$typed' + Tab -> '$expected'"
  fi
  # Leave any menu or pager, drop the line, and clear the screen for the next case.
  tmux -S "$socket" send-keys -t t C-c
  sleep 0.2
  tmux -S "$socket" send-keys -t t C-l
  for _ in $(seq 30); do
    sleep 0.1
    [ "$(screen | grep -c .)" -le 1 ] && [ "$(command_line)" = '$' ] && break
  done
}

wait_for_prompt || exit 1
# File arguments: the one file here, in one Tab.
check "cudatool kernels " "cudatool kernels sample.cu"
check "cudatool kernels sam" "cudatool kernels sample.cu"
check "cudatool compile sam" "cudatool compile sample.cu"
check "cudatool occupancy --kernel-from sam" "cudatool occupancy --kernel-from sample.cu"
# Values: architectures from the table, formats, sort columns, backends, compilers.
check "cudatool occupancy --arch sm_12" "cudatool occupancy --arch sm_12" "sample.cu"
check "cudatool kernels --arch sm_89" "cudatool kernels --arch sm_89"
# A value after the option, nothing typed yet: the values, no "-" inserted, no files listed.
check "cudatool kernels --arch " "cudatool kernels --arch sm_" "sample.cu"
check "cudatool check --format " "cudatool check --format" "sample.cu"
check "cudatool devices --format " "cudatool devices --format" "sample.cu"
check "cudatool bench-pool --backend " "cudatool bench-pool --backend" "sample.cu"
check "cudatool check --format prom" "cudatool check --format prometheus"
check "cudatool devices --format csv,n" "cudatool devices --format csv,noheader"
check "cudatool kernels --sort reg" "cudatool kernels --sort regs"
check "cudatool bench-pool --backend pi" "cudatool bench-pool --backend pinned"
check "cudatool compile --compiler nvc" "cudatool compile --compiler nvcc"
check "cudatool completion fi" "cudatool completion fish"
# Options, in one Tab.
check "cudatool occupancy --a" "cudatool occupancy --arch"
check "cudatool kernels --so" "cudatool kernels --sort"
tmux -S "$socket" kill-server 2>/dev/null
if [ $failures -gt 0 ]; then
  echo "$failures failed ($shell)"
  exit 1
fi
echo "completion in tmux: ok ($shell)"
