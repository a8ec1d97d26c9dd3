#!/bin/sh
# scripts/oci-hybrid-ns.sh CMD [ARG...]: runs CMD in a private mount namespace
# in which the cgroup2 mount beside cgroup v1 ("hybrid": /sys/fs/cgroup/unified)
# is lazily unmounted. crun 1.8 refuses the hybrid layout; with the v2 mount
# hidden it sees plain cgroup v1. Where there is no such mount, CMD runs as it is.
# Everything CMD starts (conmon, a containerd shim, the runtime) inherits the
# namespace; the host's mounts are not changed.
set -eu
if awk '$5 == "/sys/fs/cgroup/unified" && $9 == "cgroup2" {f=1} END {exit !f}' /proc/self/mountinfo; then
	exec unshare --mount --propagation private -- /bin/sh -c 'umount -l /sys/fs/cgroup/unified && exec "$@"' oci-hybrid-ns "$@"
fi
exec "$@"
