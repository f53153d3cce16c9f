#!/usr/bin/env python3
"""Time `gpufix plan` on each kind's median corpus text pasted to 500 kB and to 2 MB, and print
the ratio of the CPU times over the ratio of the sizes (about 1 when linear, larger when the
cost grows faster than the input). Usage: bench/scale_by_kind.py [GPUFIX_BINARY] (default
target/release/gpufix; run from the repository root)."""
import os, glob, yaml, subprocess, sys, tempfile
tmp = tempfile.mkdtemp()
d='tests/fixtures/corpus'
BIN=sys.argv[1] if len(sys.argv)>1 else 'target/release/gpufix'
bykind={}
for lab in sorted(glob.glob(d+'/*.label.yaml')):
    name=lab[:-len('.label.yaml')]
    l=yaml.safe_load(open(lab))
    files=[f for f in glob.glob(name+'.*') if not f.endswith('.label.yaml')]
    if not files or files[0].endswith('.gz'): continue
    f=files[0]
    sz=os.path.getsize(f)
    if sz<300 or sz>200000: continue
    k=l.get('kind','?')
    bykind.setdefault(k,[]).append((sz,f,l['input']))
def cpu(path,inp):
    t0=os.times()
    subprocess.run(['nice','-n','5',BIN,'--no-system','plan',f'--{inp}',path,'--sample','0'],capture_output=True,timeout=300)
    t1=os.times()
    return (t1.children_user-t0.children_user)+(t1.children_system-t0.children_system)
res=[]
for k,lst in sorted(bykind.items()):
    lst.sort()
    sz,f,inp=lst[len(lst)//2]
    data=open(f,'rb').read()
    if not data.endswith(b'\n'): data+=b'\n'
    out=[]
    for target in (500_000, 2_000_000):
        rep=data*max(1,target//len(data))
        p=os.path.join(tmp, 'scale_in' + os.path.splitext(f)[1])
        open(p,'wb').write(rep)
        try: out.append((len(rep),cpu(p,inp)))
        except subprocess.TimeoutExpired: out.append((len(rep),999))
    (s1,t1),(s2,t2)=out
    ratio=(t2/max(t1,0.01))/(s2/s1)
    print(f'{ratio:5.2f} {t1:6.2f}s {t2:6.2f}s {k:28s} {os.path.basename(f)} {inp}',flush=True)
