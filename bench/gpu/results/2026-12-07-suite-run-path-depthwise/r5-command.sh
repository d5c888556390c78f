export OUT; T0=$(date +%s)
SKIP_BENCH=1 CHECK_TIMEOUT=150 GPU_CHECKS="test/gpu/cuda-backend.check.js" bash scripts/gpu-run.sh > /dev/null 2>&1
cd /tmp/trtn && timeout 120 /tmp/node test/gpu/cuda-lowering.check.js convolution > $OUT/lowering-conv.txt 2>&1; echo "lowering exit=$?" > $OUT/summary.txt; cd - > /dev/null
echo "checks $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt; grep -E "check.js exit=" $OUT/gpu-check.txt >> $OUT/summary.txt; tail -c 400 $OUT/lowering-conv.txt >> $OUT/summary.txt
MODELS="mobilenet_v3_large_b32 efficientnet_b0_b32 efficientnet_v2_s_b16 convnext_tiny_b16 convnext_small_b16 resnet50_b32 regnet_y_1_6gf_b32" PRECISION=fp16 TORCH_S=300 OURS_S=130 GIT_COMMIT=$1 bash bench/gpu/gpu-models.sh > /dev/null 2>&1
echo "total $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt; cat $OUT/summary.txt; grep "^|\|geometric" $OUT/models-bench.txt | tail -10
