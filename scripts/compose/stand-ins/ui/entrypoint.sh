#!/bin/sh
set -eu
./render-template ./config-template.yaml ./config/docker.yaml
exec ./ui-server --env docker start
