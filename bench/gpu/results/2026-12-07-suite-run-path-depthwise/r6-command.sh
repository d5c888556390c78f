export OUT; T0=$(date +%s)
SKIP_BENCH=1 CHECK_TIMEOUT=150 GPU_CHECKS="test/gpu/cuda-backend.check.js" bash scripts/gpu-run.sh > /dev/null 2>&1
echo "checks $(( $(date +%s) - T0 )) s" > $OUT/summary.txt; grep -E "check.js exit=" $OUT/gpu-check.txt >> $OUT/summary.txt; grep -o '"deviceRunPath":{[^}]*}' $OUT/gpu-check.txt >> $OUT/summary.txt
MODELS="swin_t_b8 vit_b_16_b8 bert_base_b8_s128 llama4_d2048_s512 resnet50_b1" PRECISION=fp16 TORCH_S=240 OURS_S=100 GIT_COMMIT=$1 bash bench/gpu/gpu-models.sh > /dev/null 2>&1
cd /tmp/trtn && PRECISION=fp16 ROUNDS=60 timeout 45 /tmp/node bench/gpu/run-breakdown.js /tmp/bench resnet50_b1 bert_base_b8_s128 > $OUT/breakdown.txt 2>&1
echo "total $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt; cat $OUT/summary.txt; grep "^|\|geometric" $OUT/models-bench.txt | tail -8; cat $OUT/breakdown.txt | cut -c1-400
