# Sourced by scripts/container/*.sh: podman as it runs on these machines.
# Its default ulimits cannot be set here ("setrlimit … operation not
# permitted", with runc and crun alike) and crun fails on the hybrid cgroups:
# a containers.conf of the project's own (CONTAINERS_CONF, which podman reads
# instead of /etc/containers/containers.conf) drops the ulimits and picks runc.
# The machine's own configuration is left as it is.
CONTAINERS_CONF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/containers.conf"
export CONTAINERS_CONF
command -v podman >/dev/null || {
  echo "podman is not installed (apt-get install podman runc)" >&2
  exit 1
}
