#!/usr/bin/env bash
echo "oracle-check: not yet"
