#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/parquet.sh: dtrace --format=parquet's speed and size, and DuckDB's
# time for the documented run-time-per-task query on what it wrote.
#
# ktgen writes 4 files of EVENTS events (20 lost markers each); RUNS rounds
# (default 5) of dtrace -j 1 (the text listing on one thread, the floor)
# and dtrace --format=parquet, one after the other, the ratio taken round
# by round and its median reported (this machine's speed drifts).  Bytes
# per row are the file's size over its rows, against DuckDB's own writer
# (COPY ... (FORMAT parquet, COMPRESSION zstd)) of the same rows in the
# same run.  The query time is the median of RUNS runs of the query of
# Documentation/trace/ktrace-export.rst in one DuckDB process (@duckdb/
# node-api from build/npm: npm install --prefix build/npm @duckdb/node-api;
# without it those lines are left out, saying so).
# The same sizes for a call trace: ktrace-run of tests/user/loop, CALLS
# calls (default 1000000), one row each (as many as --report counts).
# Prints BENCH lines.  Needs: time.  EVENTS (per file, default 1000000).
set -u
EVENTS=${EVENTS:-1000000}
CALLS=${CALLS:-1000000}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$ROOT/build/bench/parquet
DUCKDB_NODE_API=$ROOT/build/npm/node_modules/@duckdb/node-api
cd "$ROOT" || exit 1
command -v /usr/bin/time >/dev/null || { echo "bench/parquet: apt-get install time"; exit 1; }
make -s build/tools/dtrace build/tests/ktgen user-test-progs || exit 1
rm -rf "$W" && mkdir -p "$W"

. "$ROOT/bench/lib.sh"
BENCH=parquet

build/tests/ktgen -s 42 -c 4 -n "$EVENTS" -l 20 "$W/trace" >/dev/null || exit 1
cat "$W"/trace.cpu* >/dev/null
nr=$(build/tools/dtrace -j 1 "$W"/trace.cpu* | wc -l)
for r in $(seq "$RUNS"); do
	run_timed text-j1 build/tools/dtrace -j 1 "$W"/trace.cpu*
	run_timed parquet build/tools/dtrace --format=parquet -o "$W/t$r.parquet" "$W"/trace.cpu*
	[ "$r" = 1 ] || rm -f "$W/t$r.parquet"
done
paste "$W/text-j1.runs" "$W/parquet.runs" | awk '{ print $4 / $1 }' >"$W/ratios"
pq_time=$(median_col 1 "$W/parquet.runs")
size=$(stat -c %s "$W/t1.parquet")
echo "BENCH parquet_events $nr rows"
echo "BENCH parquet_rate $(awk -v n="$nr" -v t="$pq_time" 'BEGIN { printf "%.0f", n / (t / 1e9) }') events/s"
echo "BENCH parquet_vs_text_j1 $(median_col 1 "$W/ratios" | xargs printf '%.2f') x" \
     "(time of --format=parquet over the listing's on one thread, round by round:" \
     "$(awk '{ printf "%.2f ", $1 }' "$W/ratios" | sed 's/ $//'))"
echo "BENCH parquet_peak_rss $(awk '$3 > m { m = $3 } END { printf "%.1f", m / 1024 }' "$W/parquet.runs") MiB"
echo "BENCH parquet_bytes_per_row $(awk -v s="$size" -v n="$nr" 'BEGIN { printf "%.2f", s / n }') bytes"
build/tools/ktrace-run -o "$W/calls.d" -- build/tests/user/loop "$CALLS" >/dev/null ||
	{ echo "bench/parquet: ktrace-run failed"; exit 1; }
build/tools/dtrace --format=parquet -o "$W/calls.parquet" "$W/calls.d"/trace.* ||
	{ echo "bench/parquet: the calls' export failed"; exit 1; }
calls=$(build/tools/dtrace --report --format=csv "$W/calls.d"/trace.* |
	awk -F, 'NR > 1 { n += $4 } END { print n }')
echo "BENCH parquet_calls_bytes_per_row $(awk -v s="$(stat -c %s "$W/calls.parquet")" \
	-v n="$calls" 'BEGIN { printf "%.2f", s / n }') bytes ($calls calls of tests/user/loop)"

if [ ! -d "$DUCKDB_NODE_API" ]; then
	echo "bench/parquet: no DuckDB (npm install --prefix build/npm @duckdb/node-api): no query times" >&2
	exit 0
fi
query=$(awk '/:name: parquet-run-time$/ { on = 1; next }
	     on && /^   / { sub(/^   /, ""); print; seen = 1; next }
	     on && seen && /^[^ ]/ { exit }' Documentation/trace/ktrace-export.rst)
DUCKDB_NODE_API=$DUCKDB_NODE_API node - "$W/t1.parquet" "$W/calls.parquet" "$RUNS" "$query" <<'JS'
'use strict';
const { DuckDBInstance } = require(process.env.DUCKDB_NODE_API);
const fs = require('fs');
(async () => {
	const [file, calls, runs, query] = process.argv.slice(2);
	const con = await (await DuckDBInstance.create(':memory:')).connect();
	const sql = query.split("'trace.parquet'").join(`'${file}'`);
	const times = [];
	let rows = 0;
	for (let i = 0; i < Number(runs); i++) {
		const t0 = process.hrtime.bigint();
		rows = (await con.runAndReadAll(sql)).getRows().length;
		times.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	times.sort((a, b) => a - b);
	console.log(`BENCH parquet_query_run_time_per_task ${times[(times.length - 1) >> 1].toFixed(1)} ms` +
		    ` (DuckDB, ${rows} tasks, median of ${runs})`);
	for (const [name, f] of [['duckdb_bytes_per_row', file], ['duckdb_calls_bytes_per_row', calls]]) {
		const duck = f + '.duckdb';

		await con.run(`COPY (SELECT * FROM '${f}') TO '${duck}' (FORMAT parquet, COMPRESSION zstd)`);
		const n = (await con.runAndReadAll(`SELECT count(*) FROM '${f}'`)).getRows()[0][0];
		console.log(`BENCH ${name} ${(fs.statSync(duck).size / Number(n)).toFixed(2)} bytes` +
			    ` (DuckDB's writer, zstd, the same rows)`);
	}
})().catch(e => { console.error('bench/parquet: ' + e.message); process.exit(1); });
JS
[ "${KEEP:-}" ] || rm -rf "$W"
