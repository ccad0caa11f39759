#!/bin/sh
# An --on-finding command that POSTs each finding event to a webhook:
#
#   NETLENS_WEBHOOK_URL=https://hooks.example/netlens \
#     netlens export --on-finding /usr/share/netlens/on-finding-webhook.sh
#
# netlens runs it when a finding starts and when it clears, with the event
# as JSON on stdin ({"event":"start"|"clear","time":...,"host":...,
# "netns":...,"finding":{"id":...,"severity":...,"summary":...,"hint":...}})
# and NETLENS_EVENT, NETLENS_FINDING and NETLENS_SEVERITY in the
# environment. The body is posted as it is; a receiver that wants another
# shape (Slack's {"text": ...}) takes a small transform in between.
# A non-zero exit (curl --fail: the receiver said no) is logged by netlens.
set -eu
: "${NETLENS_WEBHOOK_URL:?set NETLENS_WEBHOOK_URL to the webhook to post to}"
exec curl --silent --show-error --fail --max-time 5 \
    --header 'Content-Type: application/json' \
    --data-binary @- "$NETLENS_WEBHOOK_URL"
