#!/bin/sh
# Pays every line of a CSV file (address,amount[,memo]) with the ledger-node command line, then shows
# the balance with curl. The keystore's passphrase comes from LEDGER_KEYSTORE_PASSPHRASE (or a prompt).
#
#   LEDGER_KEYSTORE_PASSPHRASE=... ./pay-from-csv.sh payments.csv
#
# LEDGER_NODE_URL (default http://127.0.0.1:8080); LEDGER_NODE_CMD (default: ledger-node) runs the
# command line; ACCOUNT picks the keystore's account (default: its first).
set -eu
file=${1:?usage: pay-from-csv.sh FILE.csv}
node=${LEDGER_NODE_URL:-http://127.0.0.1:8080}
cmd=${LEDGER_NODE_CMD:-ledger-node}
account=${ACCOUNT:-#1}
count=0
# The last line may lack a newline: read it too.
while IFS=, read -r to amount memo || [ -n "$to" ]; do
  case "$to" in '' | '#'* | address) continue ;; esac
  if [ -n "${memo:-}" ]; then
    hash=$($cmd send "$to" "$amount" --memo "$memo" --account "$account" --node "$node" --json | jq -r .hash)
  else
    hash=$($cmd send "$to" "$amount" --account "$account" --node "$node" --json | jq -r .hash)
  fi
  echo "paid $amount XE to $to in block $hash"
  count=$((count + 1))
done < "$file"
from=$($cmd keys list --json | jq -r --arg a "$account" 'if ($a | startswith("#")) then .[($a[1:] | tonumber) - 1].address else (.[] | select(.label == $a) | .address) end')
echo "paid $count payments; balance of $from: $(curl -fsS "$node/accounts/$from/balance" | jq -r '.XE // "0"') micro-XE"
