#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
__global__ void nothing() {}
static nvtxEventAttributes_t mk(int type, const void *m) {
	nvtxEventAttributes_t a = {}; a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = type; if (type == NVTX_MESSAGE_TYPE_UNICODE) a.message.unicode = (const wchar_t *)m; else a.message.ascii = (const char *)m;
	return a; }
int main() {
	cudaFree(0);
	nvtxEventAttributes_t s1 = mk(NVTX_MESSAGE_TYPE_UNICODE, L"s1 start unicode first");
	nvtxRangeId_t i1 = nvtxRangeStartEx(&s1); nothing<<<1,1>>>(); cudaDeviceSynchronize(); nvtxRangeEnd(i1);
	nvtxEventAttributes_t p1 = mk(NVTX_MESSAGE_TYPE_UNICODE, L"p1 push unicode");
	nvtxRangePushEx(&p1); nothing<<<1,1>>>(); cudaDeviceSynchronize(); nvtxRangePop();
	nvtxEventAttributes_t s2 = mk(NVTX_MESSAGE_TYPE_UNICODE, L"s2 start unicode after push");
	nvtxRangeId_t i2 = nvtxRangeStartEx(&s2); nothing<<<1,1>>>(); cudaDeviceSynchronize(); nvtxRangeEnd(i2);
	nvtxEventAttributes_t s3 = mk(NVTX_MESSAGE_TYPE_ASCII, "s3 start ascii");
	nvtxRangeId_t i3 = nvtxRangeStartEx(&s3); nothing<<<1,1>>>(); cudaDeviceSynchronize(); nvtxRangeEnd(i3);
	nvtxEventAttributes_t p2 = mk(NVTX_MESSAGE_TYPE_UNICODE, L"p2 push unicode");
	nvtxRangePushEx(&p2); nothing<<<1,1>>>(); cudaDeviceSynchronize(); nvtxRangePop();
	printf("done\n"); return 0; }
