/* A stand-in for bcryptprimitives.dll, which Wine 8 (Debian 12) lacks: Rust's standard library
 * imports ProcessPrng from it, so without it no Rust .exe starts under that Wine. Built by
 * .ci/windows with mingw-w64 and put beside the .exe only when Wine has no such DLL of its own.
 * ProcessPrng fills the buffer from the system's generator (RtlGenRandom, advapi32's
 * SystemFunction036), in pieces of at most 2^28 bytes (its length is a ULONG). Never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}
