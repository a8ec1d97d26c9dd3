#!/usr/bin/python3
"""What a process (the supervisor) holds in TCP sockets and pipes, as the
kernel counts it: its sockets found by inode in `ss -tanmeH [STATE]`.

    sockmem.py PID [STATE]

prints "N RB_MAX TB_MAX HELD PIPES": how many of its sockets ss lists, the
largest receive and send buffer (skmem rb, tb), the bytes they hold
(r + t + w), and the size of its pipes (each pipe once)."""
import fcntl
import os
import re
import subprocess
import sys

d = '/proc/%s/fd' % sys.argv[1]
inodes, pipes, seen = set(), 0, set()
for n in os.listdir(d):
    try:
        link = os.readlink(os.path.join(d, n))
    except OSError:
        continue
    if link.startswith('socket:['):
        inodes.add(link[8:-1])
    elif link.startswith('pipe:') and link not in seen:
        seen.add(link)
        try:
            fd = os.open(os.path.join(d, n), os.O_RDONLY | os.O_NONBLOCK)
            pipes += fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
            os.close(fd)
        except OSError:
            pass
state = ['state', sys.argv[2]] if len(sys.argv) > 2 else []
out = subprocess.run(['ss', '-tanmeH'] + state, capture_output=True, text=True).stdout
n = rb_max = tb_max = held = 0
for block in re.split(r'\n(?=\S)', out):
    ino = re.search(r' ino:(\d+)', block)
    mem = re.search(r'skmem:\(r(\d+),rb(\d+),t(\d+),tb(\d+),f\d+,w(\d+)', block)
    if not ino or not mem or ino.group(1) not in inodes:
        continue
    r, rb, t, tb, w = map(int, mem.groups())
    n += 1
    rb_max = max(rb_max, rb)
    tb_max = max(tb_max, tb)
    held += r + t + w
print(n, rb_max, tb_max, held, pipes)
