#!/bin/sh
# The workload `make demo` traces inside the VM: processes that fork and
# exec, file I/O, HTTP over loopback (busybox httpd and wget), page faults,
# and demo-app, whose function calls libktrace records.
mkdir -p /tmp/www
echo "hello from ktrace" >/tmp/www/index.html
httpd -f -p 127.0.0.1:8080 -h /tmp/www &
server=$!
sleep 0.2
for i in 1 2 3; do
	wget -q -O /tmp/page.$i http://127.0.0.1:8080/index.html
done
cat /tmp/page.* | sort | uniq -c
dd if=/dev/zero of=/tmp/zeros bs=64k count=16 2>/dev/null
md5sum /tmp/zeros
rm -f /tmp/zeros /tmp/page.*
"${0%/*}"/demo-app
kill $server
