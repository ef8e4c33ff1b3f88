/*
 * ProcessPrng for Wine releases that lack bcryptprimitives.dll (Wine 8, as
 * Debian 12 ships it; Wine 9 has its own). Rust's std and getrandom import
 * ProcessPrng from that DLL on Windows 10+, so without it no Rust test binary
 * starts under Wine. CI only (the runner builds it into the Wine prefix): it forwards
 * to Wine's BCryptGenRandom with the system RNG, which reads the host's OS
 * generator. Never shipped, never linked into the crate.
 */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* BCryptGenRandom takes a ULONG length: feed it in pieces. */
    while (len > 0) {
        ULONG part = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, part, BCRYPT_USE_SYSTEM_PREFERRED_RNG) < 0)
            return FALSE;
        data += part;
        len -= part;
    }
    return TRUE;
}
