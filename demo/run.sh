#!/bin/sh
# `make demo` inside the VM: trace every group on every CPU while the
# workload runs, then send the trace files to the host through the console.
export KTRACE_USER_DIR=/tmp/demo
mkdir -p /tmp/demo
echo "demo: ktrace -e all -c all -o /tmp/demo/trace -- "${0%/*}"/workload.sh"
ktrace -e all -c all -o /tmp/demo/trace -- "${0%/*}"/workload.sh
echo "demo: workload exited with $?"
echo "@@DEMO-FILES-BEGIN@@"
tar -C /tmp -cf - demo | gzip | base64
echo "@@DEMO-FILES-END@@"
