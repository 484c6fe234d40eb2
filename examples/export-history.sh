#!/bin/sh
# Exports an account's history as CSV, oldest block first, with curl and jq:
#
#   ./export-history.sh ADDRESS > history.csv
#
# LEDGER_NODE_URL (default http://127.0.0.1:8080). Pages through GET /accounts/{address}/chain (100
# blocks a page; X-Total-Count gives the length). The node writes 64-bit integers as bare JSON numbers,
# which jq 1.6 reads as doubles (rounding nanosecond timestamps): sed quotes them first, so every figure
# stays exact.
set -eu
address=${1:?usage: export-history.sh ADDRESS}
node=${LEDGER_NODE_URL:-http://127.0.0.1:8080}
total=$(curl -fsS -D - -o /dev/null "$node/accounts/$address/chain?limit=1" | tr -d '\r' |
  awk -F': ' 'tolower($1) == "x-total-count" { print $2 }')
echo "timestamp_ns,type,asset,amount,counterparty,balance,finalized,hash"
offset=0
while [ "$offset" -lt "${total:-0}" ]; do
  curl -fsS "$node/accounts/$address/chain?offset=$offset&limit=100" |
    sed -E 's/"(timestamp|pow_nonce|balance|amount)":(-?[0-9]+)/"\1":"\2"/g' |
    jq -r '.[] | [.timestamp, .type, .asset, (.amount // ""), (.destination // .source // ""), .balance, .finalized, .hash] | @csv'
  offset=$((offset + 100))
done
