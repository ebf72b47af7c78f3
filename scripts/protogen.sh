#!/usr/bin/env bash
# Regenerates the Go code of every api/**/*.proto (make proto). protoc is
# the one the pinned grpcio-tools package bundles (python -m
# grpc_tools.protoc, in a venv of its own under bin/protogen); the Go
# plugins are built with `go install` at pinned versions into the same
# directory. Nothing prebuilt is downloaded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PROTOC_GEN_GO_VERSION=v1.36.12      # google.golang.org/protobuf, as in go.mod
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2   # google.golang.org/grpc/cmd/protoc-gen-go-grpc
tools="$root/bin/protogen"
venv="$tools/venv"
req="$root/scripts/protogen-requirements.txt"
stamp="$venv/.requirements.sha256"
mkdir -p "$tools"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
  echo "$want" > "$stamp"
fi
if [ "$("$tools/protoc-gen-go" --version 2>/dev/null)" != "protoc-gen-go $PROTOC_GEN_GO_VERSION" ]; then
  GOBIN="$tools" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if [ "$("$tools/protoc-gen-go-grpc" --version 2>/dev/null)" != "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}" ]; then
  GOBIN="$tools" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi
mapfile -t protos < <(find api -name '*.proto' | sort)
if [ ${#protos[@]} -eq 0 ]; then
  echo "protogen: no .proto under api/" >&2
  exit 1
fi
"$venv/bin/python" -m grpc_tools.protoc -I api \
  --plugin=protoc-gen-go="$tools/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$tools/protoc-gen-go-grpc" \
  --go_out=. --go_opt=module=github.com/corral-db/corral \
  --go-grpc_out=. --go-grpc_opt=module=github.com/corral-db/corral \
  "${protos[@]}"
echo "protogen: ${protos[*]}" >&2
