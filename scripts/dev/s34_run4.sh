#!/usr/bin/env bash
# Session 34 run 4: run 3's steps (s34_run3.sh) unchanged, on the code where the shadows'
# R(k1, i) loads became one exact shared load each (the compiler had loaded both candidate
# addresses and kept one: racecheck saw the shadows read sh.rk).
exec bash "$(dirname "${BASH_SOURCE[0]}")/s34_run3.sh"
