# The walkthroughs' webhook receiver: scripts/webhook-receiver.py on 127.0.0.1:$PORT, appending each body to $LOG,
# stopped (and $LOG removed) when the script exits. Returns once it answers; fail() says why it could not listen.
start_receiver() {
  python3 scripts/webhook-receiver.py "$PORT" --log "$LOG" >/dev/null 2>&1 &
  RECEIVER=$!
  trap 'kill $RECEIVER 2>/dev/null; rm -f "$LOG"' EXIT
  for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
    kill -0 $RECEIVER 2>/dev/null || break
    sleep 0.1
  done
  fail "the webhook receiver could not listen on 127.0.0.1:$PORT (RECEIVER_PORT=... to choose another)"
}
