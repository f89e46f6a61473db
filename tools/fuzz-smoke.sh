#!/usr/bin/env bash
echo "fuzz-smoke: no fuzz targets yet"
