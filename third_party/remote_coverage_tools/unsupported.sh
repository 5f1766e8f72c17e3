#!/bin/sh
# Coverage tooling is a download Bazel 4 cannot make offline.
echo "bazel coverage is not supported in Kiln's offline build" >&2
exit 1
