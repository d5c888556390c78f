export OUT; T0=$(date +%s)
SKIP_BENCH=1 CHECK_TIMEOUT=150 GPU_CHECKS="test/gpu/cuda-backend.check.js test/gpu/completion.check.js test/gpu/device-memory.check.js test/gpu/device-copies.check.js test/gpu/worker-threads.check.js test/gpu/timing-cache.check.js" bash scripts/gpu-run.sh > /dev/null 2>&1
echo "checks $(( $(date +%s) - T0 )) s" > $OUT/summary.txt; grep -E "check.js exit=|declarations.cc exit=" $OUT/gpu-check.txt >> $OUT/summary.txt
grep -o '"deviceRunPath":{[^}]*}' $OUT/gpu-check.txt >> $OUT/summary.txt
GROUP=1 PRECISION=fp16 TORCH_S=300 OURS_S=140 GIT_COMMIT=$1 bash bench/gpu/gpu-models.sh > /dev/null 2>&1
echo "group1 done $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt
cd /tmp/trtn && PRECISION=fp16 ROUNDS=60 timeout 60 /tmp/node bench/gpu/run-breakdown.js /tmp/bench resnet50_b1 bert_base_b8_s128 > $OUT/breakdown.txt 2>&1
echo "total $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt; cat $OUT/summary.txt; grep "^|\|geometric" $OUT/models-bench.txt | tail -15
