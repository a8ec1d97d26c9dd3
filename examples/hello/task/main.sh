#!/bin/sh
# A small task: count the words of the input, write the result, and show
# what the boundary looks like from inside.
set -eu
mkdir -p out
wc -w < task/input.txt > out/result.txt
echo "words: $(cat out/result.txt)"
echo "I am uid $(id -u) on host '$(hostname)'; I can see $(ls /proc | grep -c '^[0-9]') processes."
if cat /etc/shadow >/dev/null 2>&1; then echo "read /etc/shadow: yes"; else echo "read /etc/shadow: no"; fi
if ls /root >/dev/null 2>&1; then echo "see /root: yes"; else echo "see /root: no"; fi
