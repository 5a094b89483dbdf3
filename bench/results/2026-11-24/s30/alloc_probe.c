/* Session 30, command 2: the probe as it ran (built with cc -O2 -std=c11 -D_GNU_SOURCE -Icommon -I. against
 * build-lead/lib's or build-lead/old/lib's libumkit_replay.a and libumkit_common.a, -lsqlite3 -lzstd -lm -pthread).
 * Arguments: TRACE PLAN TOUCH_KB REPS BUDGET [STRIDE]. bench/alloc_path.c is the same measurement, kept.
 * This comment was added after the run. */
/* Local probe: DLRM's allocation sequence through the arena and the idle engine hooks. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "arena.h"
#include "plan.h"
#include "replay/engine.h"

static uint64_t nowns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000ull+t.tv_nsec;}
static uint64_t next_base = 1ull<<40;
static int map(void*c,uint64_t b,uint64_t*base){*base=next_base;next_base+=b+(2ull<<20);return 0;}
static void unmap(void*c,uint64_t b,uint64_t n){}
static uint64_t tok=1;
static uint64_t frec(void*c){return tok++;}
static bool fdone(void*c,uint64_t t){return true;}
static void fwait(void*c,uint64_t t){}
static void issue(void*c,enum engine_op op,const struct engine_range*r,size_t n,uint64_t w,uint64_t t){}
static uint64_t mk=1; static uint64_t mark(void*c){return mk++;}
static uint64_t now(void*c){return nowns();}
struct ev{long long ns;int isfree;long long id;long long size;};
static int cmp(const void*a,const void*b){const struct ev*x=a,*y=b;if(x->ns!=y->ns)return x->ns<y->ns?-1:1;return x->isfree<y->isfree?1:(x->isfree>y->isfree?-1:0);}
int main(int argc,char**argv){
	const char*db=argv[1],*planpath=argv[2]; long thrash_kb=atol(argv[3]); long stride=argc>6?atol(argv[6]):64; int reps=atoi(argv[4]); uint64_t budget=strtoull(argv[5],0,10);
	sqlite3*s;sqlite3_open(db,&s);sqlite3_stmt*st;
	sqlite3_prepare_v2(s,"select id,size,alloc_ns,free_ns from alloc order by id",-1,&st,0);
	struct ev*e=malloc(sizeof*e*20000);size_t n=0;
	while(sqlite3_step(st)==SQLITE_ROW){long long id=sqlite3_column_int64(st,0),sz=sqlite3_column_int64(st,1);
		e[n++]=(struct ev){sqlite3_column_int64(st,2),0,id,sz};
		if(sqlite3_column_type(st,3)!=SQLITE_NULL)e[n++]=(struct ev){sqlite3_column_int64(st,3),1,id,sz};}
	qsort(e,n,sizeof*e,cmp);
	char err[256]; struct plan*p=plan_load(planpath,err,sizeof err); if(!p){fprintf(stderr,"%s\n",err);return 1;}
	struct engine_executor x={0,issue,mark,now,NULL,NULL};
	struct engine_config cfg={ENGINE_PLAN,budget,p,true};
	engine*en=engine_create(&cfg,&x,err,sizeof err); if(!en){fprintf(stderr,"%s\n",err);return 1;}
	fprintf(stderr,"follows launches: %d\n",engine_follows_launches(en));
	struct arena_config ac={0}; struct arena_backend b={0,map,unmap,frec,fdone,fwait};
	arena*ar=arena_create(&ac,&b);
	uint64_t *addr=calloc(20000,8),*aid=calloc(20000,8);
	char*junk=malloc(thrash_kb*1024+1); memset(junk,1,thrash_kb*1024+1); volatile char sink=0;
	uint64_t tot=0,calls=0,tot_arena=0;
	for(int r=0;r<reps;r++){
	 for(size_t i=0;i<n;i++){
		for(long k=0;k<thrash_kb*1024;k+=stride)junk[k]++;
		uint64_t t0=nowns();
		if(!e[i].isfree){struct arena_alloc a; arena_alloc(ar,e[i].size,&a); uint64_t t1=nowns(); tot_arena+=t1-t0; addr[e[i].id]=a.address; engine_on_alloc(en,a.id,a.address,a.size);}
		else{struct arena_alloc a; if(arena_free(ar,addr[e[i].id],&a)!=ARENA_OK){fprintf(stderr,"free?\n");return 1;} uint64_t t1=nowns(); tot_arena+=t1-t0; engine_on_free(en,a.id);}
		tot+=nowns()-t0;calls++;
	 }
	 /* free what is left live so the next rep starts again */
	 static char fr[20000]; for(size_t i=0;i<n;i++) if(e[i].isfree) fr[e[i].id]=1;
	 for(size_t i=0;i<n;i++) if(!e[i].isfree && !fr[e[i].id]){struct arena_alloc a; arena_free(ar,addr[e[i].id],&a); engine_on_free(en,a.id);}
	}
	printf("calls %lu  ns/call %.1f  arena ns/call %.1f\n",calls,(double)tot/calls,(double)tot_arena/calls);
	(void)sink; return 0;
}
