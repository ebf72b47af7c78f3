# Sourced by scripts that keep a build once per user in the corral cache
# (scripts/mvn-fetch.sh, scripts/python-venv.sh).
#
# corral_cache SUBDIR prints the cache directory to use: $CORRAL_CACHE,
# default ${XDG_CACHE_HOME:-~/.cache}/corral, after making SUBDIR in it;
# or "none" when there is no usable one (CORRAL_CACHE=none, no HOME, a
# read-only directory, no flock to share it safely), in which case the
# caller works in place.
corral_cache() {
  local sub=$1 cache=none
  if [ -n "${XDG_CACHE_HOME:-}" ]; then
    cache=$XDG_CACHE_HOME/corral
  elif [ -n "${HOME:-}" ]; then
    cache=$HOME/.cache/corral
  fi
  cache=${CORRAL_CACHE:-$cache}
  if [ "$cache" != none ] && ! { command -v flock >/dev/null && mkdir -p "$cache/$sub" 2>/dev/null; }; then
    cache=none
  fi
  echo "$cache"
}
