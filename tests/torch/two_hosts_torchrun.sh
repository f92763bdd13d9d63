#!/usr/bin/env bash
# Two "hosts" on one machine: phantora-cluster --serve holds the bridge and the network,
# two torchrun node groups of 2 ranks each (torchrun --nnodes 2 --node_rank K
# --nproc_per_node 2, each under phantora-rank) train examples/torch/train_gpt.py with
# DDP over CURVE.  Each group runs in its own network namespace, joined to the bridge's
# by a veth pair and a Linux bridge, with private addresses that exist only inside the
# namespaces; where namespaces cannot be made (not root, no CAP_NET_ADMIN), the groups
# use separate loopback addresses instead (127.0.0.2, 127.0.0.3).
#
# Checked: every step time of the served run is the one a 4-rank single-launcher run
# (phantora-cluster --nproc 4) of the same scenario prints, host time included (the served
# bridge learns the command from its ranks' hellos and prices it as the launcher does); every served rank was forked
# by its "host"'s fork server (phantora-rank's default: the stand-ins' "[phantora] rank R
# ... forked as pid Q by this host's fork server (pid S" lines, one server per network
# namespace); a phantora-rank with a key that is not the run's is refused (and logged
# with its address) and gives up.
#
# usage: two_hosts_torchrun.sh PHANTORA_CLUSTER PHANTORA_RANK PYTHON SOURCE_DIR
#
# As a bench (issue 33: served and launched runs agree), another script and arguments:
# PHANTORA_TWO_HOSTS_SCRIPT (default examples/torch/train_gpt.py; a renamed copy is a
# program no profile recorded, priced by the host-time model), PHANTORA_TWO_HOSTS_ARGS
# (default a small DDP model, 3 steps), PHANTORA_TWO_HOSTS_TIMEOUT (seconds a run may take,
# 200), PHANTORA_TWO_HOSTS_CONNECT_TIMEOUT (seconds the ranks may take to start, 120),
# PHANTORA_TWO_HOSTS_HEARTBEAT_TIMEOUT and _BRIDGE_TIMEOUT (20 and 60 s: the bridge's and
# phantora-rank's patience with each other).  It prints the largest difference between the two runs' step figures either way.
set -uo pipefail

CLUSTER=$1 RANK_BIN=$2 PYTHON=$3 SRC=$4
SCRIPT=${PHANTORA_TWO_HOSTS_SCRIPT:-$SRC/examples/torch/train_gpt.py}
LIMIT=${PHANTORA_TWO_HOSTS_TIMEOUT:-200}
CONNECT=${PHANTORA_TWO_HOSTS_CONNECT_TIMEOUT:-120} # phantora-cluster --connect-timeout
# How long the bridge and a group's phantora-rank wait on each other: the served bridge
# learns the host-time model at the first hello, which a loaded machine can make slow.
HEARTBEAT=${PHANTORA_TWO_HOSTS_HEARTBEAT_TIMEOUT:-20}
BRIDGE_WAIT=${PHANTORA_TWO_HOSTS_BRIDGE_TIMEOUT:-60}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/phantora-two-hosts.XXXXXX")
# The fork servers' sockets: this run's own (they end by themselves, idle).
export XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
SMALL=${PHANTORA_TWO_HOSTS_ARGS:-"--layers 2 --width 256 --heads 4 --seq 128 --batch 4 --vocab 4096 --steps 3 --mode ddp"}
NS_PREFIX="phantora-$$"
USE_NETNS=0
PIDS=()

fail() {
    echo "FAIL: $*" >&2
    for f in "$WORK"/*.log; do echo "=== $f"; tail -40 "$f"; done >&2
    exit 1
}

cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    if [ "$USE_NETNS" = 1 ]; then
        for ns in hub a b; do ip netns del "$NS_PREFIX-$ns" 2>/dev/null; done
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# hub: the bridge's "host"; a, b: the two torchrun node groups.
in_ns() { # in_ns NAME CMD... (no namespace in loopback mode)
    local ns=$1
    shift
    if [ "$USE_NETNS" = 1 ]; then ip netns exec "$NS_PREFIX-$ns" "$@"; else "$@"; fi
}

# PHANTORA_TWO_HOSTS_LOOPBACK=1 takes the loopback way even where namespaces work.
if [ "${PHANTORA_TWO_HOSTS_LOOPBACK:-0}" != 1 ] && ip netns add "$NS_PREFIX-hub" 2>/dev/null; then
    USE_NETNS=1
    NET="10.213.$(($$ % 250 + 1))"
    ip netns add "$NS_PREFIX-a" && ip netns add "$NS_PREFIX-b" || fail "ip netns add"
    ip -n "$NS_PREFIX-hub" link add br0 type bridge || fail "bridge device"
    ip -n "$NS_PREFIX-hub" addr add "$NET.1/24" dev br0
    ip -n "$NS_PREFIX-hub" link set br0 up
    ip -n "$NS_PREFIX-hub" link set lo up
    for g in a b; do
        ip link add "veth-$g" netns "$NS_PREFIX-hub" type veth peer name eth0 netns "$NS_PREFIX-$g" ||
            fail "veth pair for $g"
        ip -n "$NS_PREFIX-hub" link set "veth-$g" master br0 up
        ip -n "$NS_PREFIX-$g" link set lo up
        ip -n "$NS_PREFIX-$g" link set eth0 up
    done
    ip -n "$NS_PREFIX-a" addr add "$NET.2/24" dev eth0
    ip -n "$NS_PREFIX-b" addr add "$NET.3/24" dev eth0
    HUB=$NET.1 ADDR_A=$NET.2 ADDR_B=$NET.3
    echo "two hosts: network namespaces $NS_PREFIX-{hub,a,b} on $NET.0/24"
else
    HUB=127.0.0.1 ADDR_A=127.0.0.2 ADDR_B=127.0.0.3
    echo "two hosts: no network namespaces (not permitted here, or PHANTORA_TWO_HOSTS_LOOPBACK=1); loopback addresses $ADDR_A, $ADDR_B"
fi

cat > "$WORK/s.toml" <<EOF
extends = ["$SRC/scenarios/h200x4-nvlink.toml"]
[cpu]
time_scale = 1.0 # host time on: the recording of train_gpt.py, found by the command phantora-rank passes (PHANTORA_COMMAND)
EOF

# Only the simulated times, in a form both runs print alike.
step_times() { grep -Eo '(step [0-9]+: [0-9.]+ ms|rank [0-9]+: mean step [0-9.]+ ms)' "$1" | sort; }

# 1. One launcher, four ranks; at the same time as the served run (host time is off, so
# sharing the machine changes no simulated time).
timeout "$LIMIT" "$CLUSTER" --scenario "$WORK/s.toml" --nproc 4 --progress never --connect-timeout "$CONNECT" -- \
    "$PYTHON" "$SCRIPT" $SMALL > "$WORK/single.log" 2>&1 &
SINGLE=$!
PIDS+=("$SINGLE")

# 2. The bridge on "host" hub, serving four ranks over CURVE.
in_ns hub timeout "$LIMIT" "$CLUSTER" --scenario "$WORK/s.toml" --serve --nproc 4 \
    --listen "tcp://$HUB:*" --keys "$WORK/keys" --heartbeat-timeout "$HEARTBEAT" --progress never \
    --connect-timeout "$CONNECT" \
    -- "$PYTHON" "$SCRIPT" > "$WORK/server.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
for _ in $(seq 100); do grep -q 'serving on' "$WORK/server.log" && break; sleep 0.1; done
EP=$(sed -n 's/.*serving on \(tcp:[^ ;]*\).*/\1/p' "$WORK/server.log" | head -1)
[ -n "$EP" ] || fail "the bridge did not start serving"

# A key folder with the bridge's public key but a client key pair of its own (the
# bridge's own pair: valid CURVE keys, just not the run's client key).
mkdir -p "$WORK/foreign"
cp "$WORK/keys/server.pub" "$WORK/foreign/server.pub"
cp "$WORK/keys/server.pub" "$WORK/foreign/client.pub"
cp "$WORK/keys/server.secret" "$WORK/foreign/client.secret"
in_ns b env RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 PHANTORA_CONNECT_TIMEOUT=3 timeout 60 \
    "$RANK_BIN" --connect "$EP" --keys "$WORK/foreign" --bridge-timeout 5 -- \
    "$PYTHON" -c 'import torch; torch.zeros(1, device="cuda")' > "$WORK/foreign.log" 2>&1 &
FOREIGN=$!
PIDS+=("$FOREIGN")

# 3. Two torchrun node groups, one per "host"; node 0's agent holds the rendezvous.
for k in 0 1; do
    g=$([ "$k" = 0 ] && echo a || echo b)
    addr=$([ "$k" = 0 ] && echo "$ADDR_A" || echo "$ADDR_B")
    in_ns "$g" timeout "$LIMIT" "$RANK_BIN" --connect "$EP" --keys "$WORK/keys" \
        --bridge-timeout "$BRIDGE_WAIT" -- \
        "$PYTHON" -m torch.distributed.run --nnodes 2 --node_rank "$k" --nproc_per_node 2 \
        --master_addr "$ADDR_A" --master_port 29411 --local_addr "$addr" \
        "$SCRIPT" $SMALL > "$WORK/group$k.log" 2>&1 &
    PIDS+=("$!")
    eval "GROUP$k=$!"
done

wait "$SINGLE" || fail "the single-launcher run failed"
step_times "$WORK/single.log" > "$WORK/single.times"
[ "$(grep -c 'mean step' "$WORK/single.times")" = 4 ] || fail "expected 4 ranks' mean steps from the single run"
wait "$SERVER" || fail "the served run failed"
wait "$GROUP0" || fail "torchrun group 0 failed"
wait "$GROUP1" || fail "torchrun group 1 failed"
cat "$WORK/group0.log" "$WORK/group1.log" > "$WORK/groups.log"
step_times "$WORK/groups.log" > "$WORK/served.times"
grep -h "host time:" "$WORK/single.log" | head -1 | cut -c1-150
# The largest difference between the two runs' figures, line by line (both sorted alike).
paste -d'|' "$WORK/single.times" "$WORK/served.times" | awk -F'|' '
    { a = $1; b = $2; sub(/ ms$/, "", a); sub(/.* /, "", a); sub(/ ms$/, "", b); sub(/.* /, "", b)
      if (a + 0 > 0) { d = (b - a) / a * 100; if (d < 0) d = -d; if (d > m) m = d }; n++ }
    END { printf "served vs launched: %d step figures, largest difference %.3f %%\n", n, m }'
diff "$WORK/single.times" "$WORK/served.times" > "$WORK/diff.log" ||
    fail "the served run's step times differ from the single launcher's: $(cat "$WORK/diff.log")"
echo "step times of both runs:"
sed 's/^/  /' "$WORK/served.times"

# Every rank forked by its group's fork server: one server per "host" (network
# namespace); on loopback addresses both groups share the machine's one.
FORKED='\[phantora\] rank ([0-9]+) \(pid [0-9]+\) forked as pid [0-9]+ by this host.s fork server \(pid ([0-9]+)'
for k in 0 1; do
    grep -Eo "$FORKED" "$WORK/group$k.log" | sed -E "s/$FORKED/\1 \2/" | sort -n > "$WORK/forked$k"
    [ "$(wc -l < "$WORK/forked$k")" = 2 ] || fail "group $k: not both ranks were forked by a fork server"
    [ "$(cut -d' ' -f2 "$WORK/forked$k" | sort -u | wc -l)" = 1 ] ||
        fail "group $k: its ranks came from more than one fork server"
done
[ "$(cut -d' ' -f1 "$WORK/forked0" "$WORK/forked1" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ] ||
    fail "the forked ranks are not 0 1 2 3"
servers=$(cut -d' ' -f2 "$WORK/forked0" "$WORK/forked1" | sort -u | wc -l)
[ "$servers" = $([ "$USE_NETNS" = 1 ] && echo 2 || echo 1) ] ||
    fail "$servers fork servers for two groups (network namespaces: $USE_NETNS)"
echo "every rank was forked: $(cat "$WORK/forked0" "$WORK/forked1" | tr '\n' ';')"

wait "$FOREIGN"
foreign=$?
grep -q "refused a connection from $ADDR_B" "$WORK/server.log" ||
    ([ "$USE_NETNS" = 0 ] && grep -q "refused a connection from 127.0.0.1" "$WORK/server.log") ||
    fail "the bridge did not log the refused key"
[ "$foreign" = 86 ] || fail "the rank with a foreign key exited with $foreign, not 86"
grep -q "no answer from the bridge" "$WORK/foreign.log" || fail "the foreign rank did not say why it gave up"
echo "a foreign key was refused: $(grep -o 'refused a connection from [^:]*' "$WORK/server.log" | head -1)"
echo PASS
