#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lib/ktevents: numbers, event text, names, mask and list syntax (C checks).
. "$(dirname "$0")/dtrace-common.sh"
# the syntax checks make the parsers complain on purpose: keep that quiet
"$FORMAT_TEST" 2>/dev/null
