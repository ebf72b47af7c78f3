#!/usr/bin/env bash
# Regenerates the Go code of every api/**/*.proto with pinned tools:
# protoc from PyPI's grpcio-tools, protoc-gen-go and protoc-gen-go-grpc
# built with `go install` at fixed versions. The generated files are
# committed; run this (or `make proto`) after changing a .proto.
set -euo pipefail

GRPCIO_TOOLS_VERSION=1.85.1
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1

root=$(cd "$(dirname "$0")/.." && pwd)
tools=${PROTOGEN_TOOLS:-$root/.cache/protogen}
mkdir -p "$tools"

if [ ! -x "$tools/venv/bin/python" ] || ! "$tools/venv/bin/python" -c "import grpc_tools" 2>/dev/null ||
   [ "$("$tools/venv/bin/pip" show grpcio-tools 2>/dev/null | sed -n 's/^Version: //p')" != "$GRPCIO_TOOLS_VERSION" ]; then
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install -q "grpcio-tools==$GRPCIO_TOOLS_VERSION"
fi
GOBIN="$tools/bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
GOBIN="$tools/bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"

cd "$root"
mapfile -t protos < <(find api -name '*.proto' | sort)
if [ ${#protos[@]} -eq 0 ]; then
  echo "protogen: no .proto under api/" >&2
  exit 0
fi
PATH="$tools/bin:$PATH" "$tools/venv/bin/python" -m grpc_tools.protoc -I . \
  --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  "${protos[@]}"
echo "protogen: generated ${#protos[@]} file(s): ${protos[*]}"
