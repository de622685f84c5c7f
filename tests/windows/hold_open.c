/* hold_open FILE: opens FILE the way many Windows programs do (read access, sharing read and
 * write but not delete), prints "held" and keeps it open until its standard input closes.
 * The Windows smoke tests (tests/mcp/test_windows.py) run it under Wine to check that a write
 * over such a file answers one sentence and leaves the file whole; on Windows itself Python's
 * open() holds files this way. Built by .ci/windows with mingw-w64. */
#include <stdio.h>
#include <windows.h>

int wmain(int argc, wchar_t **argv) {
    if (argc != 2) {
        fputs("usage: hold_open FILE\n", stderr);
        return 2;
    }
    HANDLE h = CreateFileW(argv[1], GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "hold_open: cannot open the file (error %lu)\n", GetLastError());
        return 1;
    }
    puts("held");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    CloseHandle(h);
    return 0;
}
