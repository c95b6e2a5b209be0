# Session 28 (branch ah-interleaved-rows): a numpy emulation of factor_block_warps_interleaved's
# schedule (which warp takes which step on which rows, from which buffer) against LAPACK's geqrf.
# Emulates factor_block_warps_interleaved's schedule (the arithmetic of one entry per lane/row)
import numpy as np
from scipy.linalg import lapack
rng=np.random.default_rng(3)
h,B=300,32
P=rng.standard_normal((h,B))
G=P.T@P; X=P[:B].copy()
W,R=4,8
# per warp w: xd[w][r][j], gc[w][r][j] for row i = w + 4 r
xd=np.zeros((W,R,B)); gc=np.zeros((W,R,B))
for w in range(W):
    for r in range(R):
        i=w+W*r; xd[w][r]=X[i,:]; gc[w][r]=G[i,:]
twr_buf={}; rk_buf={}; s_t={}; s_rs={}; s_alpha={}
xout=X.copy()
def take(w,k1,r,twr,rkj):
    i=w+W*r
    c=xd[w][r][k1]  # lane k1's entry (value before update in this row: k1's column unaffected by step k1)
    if i!=k1: xd[w][r]=xd[w][r]-twr*c
    if i>k1: gc[w][r]=gc[w][r]-rk_buf[k1][i]*rkj
for k in range(B):
    # all warps act "concurrently" within a step; the owner's writes go to step k's buffers, others read k-1, k-2
    o=k%W; s=k//W
    # non-owner actions (read old buffers) -- do them first (they don't depend on step k)
    for w in range(W):
        if w==o or k==0: continue
        if k>=2 and w==(k-1)%W:
            for r in range(R):
                if r!=(k-1)//W: take(w,k-2,r,twr_buf[k-2],rk_buf[k-2])
        for r in range(R): take(w,k-1,r,twr_buf[k-1],rk_buf[k-1])
    w=o
    if k>0: take(w,k-1,s,twr_buf[k-1],rk_buf[k-1])
    gkk=gc[w][s][k]; xkk=xd[w][s][k]
    rnu=1/np.sqrt(gkk); nu=gkk*rnu; sg=1.0 if xkk>=0 else -1.0
    t=abs(xkk)*rnu+1; rs=1/(sg*nu+xkk)
    j=np.arange(B); later=j>k
    xjk=xd[w][s].copy()
    tw=np.where(later, t*((gc[w][s]-xkk*xjk)*rs+xjk), 0.0)
    rkj=np.where(later, xjk-tw, 0.0)
    twr=tw*rs
    twr_buf[k]=twr; rk_buf[k]=rkj
    for jj in range(k+1,B): xout[k,jj]=rkj[jj]
    s_t[k]=t; s_rs[k]=rs; s_alpha[k]=-sg*nu
    xd[w][s]=np.where(later,-twr,xd[w][s])
# final
for w in range(W):
    if w==(B-1)%W:
        for r in range(R):
            if r!=(B-1)//W: take(w,B-2,r,twr_buf[B-2],rk_buf[B-2])
    for r in range(R): take(w,B-1,r,twr_buf[B-1],rk_buf[B-1])
D=np.zeros((B,B))
for w in range(W):
    for r in range(R):
        i=w+W*r
        for jj in range(B):
            v = s_rs[jj] if i==jj else xd[w][r][jj]*s_rs[jj]
            if i>jj: xout[i,jj]=v
            else:
                if i==jj: xout[i,jj]=s_alpha[jj]
                D[i,jj]=v
qr,tau,_,_=lapack.dgeqrf(P)
print("R,V_T diff", np.abs(xout-qr[:B]).max())
print("tau diff", max(abs(s_t[k]-tau[k]) for k in range(B)))
print("V_B diff", np.abs(P[B:]@D-qr[B:]).max())
