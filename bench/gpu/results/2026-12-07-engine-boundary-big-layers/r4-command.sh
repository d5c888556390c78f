export OUT; T0=$(date +%s)
SKIP_BENCH=1 CHECK_TIMEOUT=200 bash scripts/gpu-run.sh > /dev/null 2>&1
echo "checks $(( $(date +%s) - T0 )) s" > $OUT/summary.txt; grep -E "check.js exit=|declarations.cc exit=" $OUT/gpu-check.txt >> $OUT/summary.txt; grep -E '"check":"cuda-lowering"' $OUT/gpu-check.txt | cut -c1-200 >> $OUT/summary.txt
MODELS="llama4_d2048_s512 bert_base_b8_s128" SKIP_TORCH_COMPILE=1 PRECISION=fp16 TORCH_S=120 OURS_S=110 bash bench/gpu/gpu-models.sh > /dev/null 2>&1
grep -h "^| \(llama\|bert\)" $OUT/models-bench.txt >> $OUT/summary.txt
echo "total $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt; cat $OUT/summary.txt
