#!/bin/bash
# litecerts_test.sh LITECERTS: makes a CA and each kind of certificate with
# cmd/litecerts and checks them with openssl: chain, names, extensions,
# validity windows, key permissions, the authz file and every refusal.
set -euo pipefail

certs=$1
d=${TEST_TMPDIR:-$(mktemp -d)}/certs
rm -rf "$d"
fails=0
pass() { echo "PASS: $*"; }
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
# expect_fail DESCRIPTION MESSAGE-PART CMD...: CMD exits non-zero and says MESSAGE-PART.
expect_fail() {
	local what=$1 want=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		fail "$what: succeeded: $out"
	elif [[ "$out" != *"$want"* ]]; then
		fail "$what: message \"$out\" lacks \"$want\""
	else
		pass "$what"
	fi
}

"$certs" "$d" ca
"$certs" "$d" manager
"$certs" "$d" manager mgr2
"$certs" "$d" node node1
"$certs" "$d" operator ops
"$certs" --days 2 "$d" node short
"$certs" --not-before 20200101000000Z --not-after 20210101000000Z "$d" node expired
"$certs" --not-before 20900101000000Z --not-after 20910101000000Z "$d" node future

subj=$(openssl x509 -in "$d/ca.crt" -noout -subject -ext basicConstraints)
if [[ "$subj" == *"CA:TRUE"* ]]; then pass "CA is CA:TRUE"; else fail "CA: $subj"; fi
if openssl verify -CAfile "$d/ca.crt" "$d/ca.crt" >/dev/null; then pass "CA self-signed"; else fail "CA does not verify"; fi

for n in litemgr mgr2 node1 ops short; do
	if openssl verify -CAfile "$d/ca.crt" "$d/$n.crt" >/dev/null; then
		pass "$n verifies against the CA"
	else
		fail "$n does not verify"
	fi
	out=$(openssl x509 -in "$d/$n.crt" -noout -subject -ext subjectAltName,extendedKeyUsage,basicConstraints)
	if [[ "$out" == *"subject=CN = $n"* ]]; then pass "$n: subject CN"; else fail "$n: subject: $out"; fi
	if [[ "$out" == *"DNS:$n"* ]]; then pass "$n: SAN DNS:$n"; else fail "$n: SAN: $out"; fi
	if [[ "$out" == *"TLS Web Server Authentication, TLS Web Client Authentication"* ]]; then pass "$n: serverAuth,clientAuth"; else fail "$n: EKU: $out"; fi
	if [[ "$out" == *"CA:FALSE"* ]]; then pass "$n: CA:FALSE"; else fail "$n: basicConstraints: $out"; fi
	alg=$(openssl pkey -in "$d/$n.key" -noout -text 2>&1 | grep -c 'NIST CURVE: P-256' || true)
	if [[ "$alg" == 1 ]]; then pass "$n: P-256 key"; else fail "$n: key is not P-256"; fi
	# The key matches the certificate.
	if [[ "$(openssl pkey -in "$d/$n.key" -pubout)" == "$(openssl x509 -in "$d/$n.crt" -noout -pubkey)" ]]; then
		pass "$n: key matches certificate"
	else
		fail "$n: key does not match"
	fi
	sig=$(openssl x509 -in "$d/$n.crt" -noout -text | grep -m1 'Signature Algorithm')
	if [[ "$sig" == *ecdsa-with-SHA256* ]]; then pass "$n: ecdsa-with-SHA256"; else fail "$n: $sig"; fi
done
for f in ca litemgr node1 ops; do
	mode=$(stat -c %a "$d/$f.key")
	if [[ "$mode" == 600 ]]; then pass "$f.key is 0600"; else fail "$f.key is $mode"; fi
done

# Every certificate starts an hour back (clock skew), the CA included.
now=$(date +%s)
for f in ca node1; do
	nb=$(date -d "$(openssl x509 -in "$d/$f.crt" -noout -startdate | cut -d= -f2)" +%s)
	if ((now - nb >= 3000 && now - nb <= 3900)); then
		pass "$f starts an hour back"
	else
		fail "$f starts $((now - nb)) s back"
	fi
done

# --days 2: expires within 3 days, not within 1.
if openssl x509 -in "$d/short.crt" -noout -checkend $((3 * 86400)) >/dev/null; then
	fail "short: valid beyond 3 days"
else
	pass "short: --days 2 honoured"
fi
if openssl x509 -in "$d/short.crt" -noout -checkend 86400 >/dev/null; then pass "short: valid for a day"; else fail "short: not valid for a day"; fi

out=$(openssl verify -CAfile "$d/ca.crt" "$d/expired.crt" 2>&1 || true)
if [[ "$out" == *"certificate has expired"* ]]; then pass "expired is expired"; else fail "expired: $out"; fi
out=$(openssl verify -CAfile "$d/ca.crt" "$d/future.crt" 2>&1 || true)
if [[ "$out" == *"certificate is not yet valid"* ]]; then pass "future is not yet valid"; else fail "future: $out"; fi
out=$(openssl x509 -in "$d/expired.crt" -noout -startdate -enddate)
if [[ "$out" == *"notBefore=Jan  1 00:00:00 2020 GMT"*"notAfter=Jan  1 00:00:00 2021 GMT"* ]]; then pass "expired: window as asked"; else fail "expired: window $out"; fi

want=$'litemgr manager\nmgr2 manager\nnode1 node\nops operator\nshort node\nexpired node\nfuture node'
got=$(grep -v '^#' "$d/authz")
if [[ "$got" == "$want" ]]; then pass "authz lists every issue with its role"; else fail "authz: $got"; fi

# A second CA: node1's certificate does not verify against it.
"$certs" "$d/other" ca
out=$(openssl verify -CAfile "$d/other/ca.crt" "$d/node1.crt" 2>&1 || true)
if [[ "$out" == *"unable to get local issuer certificate"* ]]; then pass "other CA rejects node1"; else fail "other CA: $out"; fi
# --ca: a certificate for a name DIR already has, signed by DIR's CA.
"$certs" --ca "$d" --not-before 20200101000000Z --not-after 20210101000000Z "$d/old" node node1
out=$(openssl verify -CAfile "$d/ca.crt" "$d/old/node1.crt" 2>&1 || true)
if [[ "$out" == *"certificate has expired"* ]]; then pass "--ca: expired node1 from the main CA"; else fail "--ca: $out"; fi

before=$(sha256sum "$d/node1.crt" "$d/node1.key" "$d/ca.crt" "$d/ca.key" "$d/authz")
expect_fail "existing node refused" "refusing to overwrite" "$certs" "$d" node node1
expect_fail "existing name of another kind refused" "refusing to overwrite" "$certs" "$d" operator node1
expect_fail "existing CA refused" "refusing to overwrite the CA" "$certs" "$d" ca
expect_fail "bad name refused" "is not 1..64 characters" "$certs" "$d" node "a/b"
expect_fail "upper case refused" "is not 1..64 characters" "$certs" "$d" node "Node1"
expect_fail "upper-case manager refused" "is not 1..64 characters" "$certs" "$d" manager "LITEMGR"
expect_fail "trailing dot refused" "is not 1..64 characters" "$certs" "$d" manager "litemgr."
expect_fail "name ca refused" "CA's file name" "$certs" "$d" node ca
expect_fail "node without name refused" "needs exactly one NAME" "$certs" "$d" node
expect_fail "unknown kind refused" "unknown kind" "$certs" "$d" admin x
expect_fail "bad --days refused" "is not a number of days" "$certs" --days 0 "$d" node n1
expect_fail "bad --not-before refused" "is not YYYYMMDDHHMMSSZ" "$certs" --not-before 2020 --not-after 20210101000000Z "$d" node n2
expect_fail "reversed window refused" "must be earlier" "$certs" --not-before 20210101000000Z --not-after 20200101000000Z "$d" node n3
expect_fail "no CA refused" "no CA in" "$certs" "$d/empty" node n4
after=$(sha256sum "$d/node1.crt" "$d/node1.key" "$d/ca.crt" "$d/ca.key" "$d/authz")
if [[ "$before" == "$after" ]]; then pass "refusals changed no file"; else fail "a refusal changed files"; fi
if [[ ! -e "$d/n1.key" && ! -e "$d/n2.key" && ! -e "$d/n3.key" ]]; then pass "refusals left no key"; else fail "a refusal left a key"; fi
if "$certs" --help | grep -q 'Usage: litecerts'; then pass "--help"; else fail "--help"; fi

echo "litecerts_test: $fails failed"
((fails == 0))
