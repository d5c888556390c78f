export OUT; R=$(pwd); T0=$(date +%s)
SKIP_BENCH=1 CHECK_TIMEOUT=200 GPU_CHECKS="test/gpu/select-device.check.js test/gpu/cuda-lowering.check.js" bash scripts/gpu-run.sh > /dev/null 2>&1
echo "checks $(( $(date +%s) - T0 )) s" > $OUT/summary.txt; grep -E "check.js exit=" $OUT/gpu-check.txt >> $OUT/summary.txt; grep -E '"passed"|cases|failed' $OUT/gpu-check.txt | tail -5 >> $OUT/summary.txt
MODELS="llama4_d2048_s512 bert_base_b8_s128" SKIP_TORCH_COMPILE=1 PRECISION=fp16 TORCH_S=150 OURS_S=120 bash bench/gpu/gpu-models.sh > /dev/null 2>&1
cp $OUT/models-bench.txt $OUT/models-bench-new.txt 2>/dev/null
echo "models new $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt
mkdir -p /tmp/trtn-old && cp -r /tmp/trtn/node_modules /tmp/trtn/package.json /tmp/trtn/build /tmp/trtn/bench /tmp/trtn-old/ && tar -xJf .gpu/old-dist.tar.xz -C /tmp/trtn-old && sed -i "s/kind === 'engine'/kind === 'tensorrt'/" /tmp/trtn-old/bench/gpu/models.bench.js
(cd /tmp/trtn-old && PRECISION=fp16 timeout 120 /tmp/node bench/gpu/models.bench.js /tmp/bench > $OUT/models-bench-old.txt 2>&1)
echo "models old $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt
for d in /tmp/trtn; do (cd $d && timeout 60 /tmp/node -e "
const lib=require('./dist/index.js');(async()=>{for(const m of ['llama4_d2048_s512','bert_base_b8_s128']){const p=await lib.compile('/tmp/bench/'+m+'/model.pt2',{backend:'cuda',precisions:['fp16'],logger:(l,s)=>{if(/attention|RMSNorm|rms-norm|projections/.test(s))console.log(m,s)}});await p.dispose();}})().catch(e=>console.log('ERR',e.message))" > $OUT/passes-$(basename $d).txt 2>&1); done
grep -h "" $OUT/passes-*.txt >> $OUT/summary.txt
grep -h "^| \(llama\|bert\)" $OUT/models-bench-new.txt $OUT/models-bench-old.txt >> $OUT/summary.txt
echo "total $(( $(date +%s) - T0 )) s" >> $OUT/summary.txt; cat $OUT/summary.txt
