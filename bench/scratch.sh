# Sourced by the bench scripts: a scratch directory with an empty workspace
# and a HOME, removed on exit; and, with BENCH_UID set (as root), `as`: the
# command prefix that runs a benchmark as that unprivileged user.
#   bench_scratch          sets scratch and workspace
#   bench_as_user          hands workspace and home to BENCH_UID; sets as
bench_scratch() {
  scratch=$(mktemp -d /tmp/corral-bench.XXXXXX)
  trap 'rm -rf "$scratch"' EXIT
  workspace=$scratch/workspace
  mkdir "$workspace" "$scratch/home"
  chmod 755 "$scratch"
}
bench_as_user() {
  as=()
  if [[ -n "${BENCH_UID:-}" ]]; then
    chown -R "$BENCH_UID:$BENCH_UID" "$workspace" "$scratch/home"
    as=(setpriv "--reuid=$BENCH_UID" "--regid=$BENCH_UID" --clear-groups env "HOME=$scratch/home")
  fi
}
