#!/bin/sh
# Runs once, after InfluxDB 2's first setup (the image's /docker-entrypoint-initdb.d): applies
# the Agent-Reach dashboard template and maps the bucket to the InfluxQL database `reach`, which
# the router's GET /v1/stats and the Grafana dashboard query.
set -eu
org="$DOCKER_INFLUXDB_INIT_ORG"
bucket="$DOCKER_INFLUXDB_INIT_BUCKET"
influx apply --org "$org" --file /etc/agent-reach/dashboard-template.json --force yes
bucket_id="$(influx bucket list --org "$org" --name "$bucket" --hide-headers | cut -f1)"
influx v1 dbrp create --org "$org" --bucket-id "$bucket_id" --db reach --rp autogen --default
