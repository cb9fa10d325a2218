import numpy as np
S=4096
q=np.arange(S)[:,None]; k=np.arange(S)[None,:]
masks={'causal':q>=k,'sliding':(q>=k)&(q-k<=1024),'prefix':(k<=512)|(q>=k)}
for name,m in masks.items():
  for BM,BN in [(128,128),(128,64),(64,128)]:
    t=m.reshape(S//BM,BM,S//BN,BN).sum(axis=(1,3))
    comp=(t>0).sum()*BM*BN; useful=m.sum()
    print(name,BM,BN,'eff %.4f'%(useful/comp),'density %.4f'%(useful/S/S))
