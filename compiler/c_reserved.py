"""Names a generated header must not give its model object: the identifiers and macros of the C99 standard headers
that the header and the firmware examples include (math.h, stdio.h, stdlib.h, string.h, stdint.h, stddef.h, float.h,
time.h, ctype.h, errno.h) and ``main``. ``static const fm_nbk log = {...}`` next to ``#include <math.h>`` does not
compile, and ``errno`` or ``NULL`` expand as macros, so `export-c --name` refuses them in one line (C99 7.1.3: these
identifiers are reserved for the library)."""

from __future__ import annotations

import re

_MATH = """acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ilogb ldexp log
    log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf erfc lgamma tgamma ceil floor nearbyint rint
    lrint llrint round lround llround trunc fmod remainder remquo copysign nan nextafter nexttoward fdim fmax fmin
    fma""".split()
# (function-like macros such as isnan or offsetof are left out: an object of that name compiles, as it is never
# followed by a parenthesis; FP_FAST_FMA* are defined where the target has a fast fma, e.g. aarch64)
_MATH_MACROS = """float_t double_t HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN FP_INFINITE FP_NAN FP_NORMAL
    FP_SUBNORMAL FP_ZERO FP_FAST_FMA FP_FAST_FMAF FP_FAST_FMAL FP_ILOGB0 FP_ILOGBNAN MATH_ERRNO MATH_ERREXCEPT
    math_errhandling""".split()
_STDIO = """printf fprintf sprintf snprintf vprintf vfprintf vsprintf vsnprintf scanf fscanf sscanf vscanf vfscanf
    vsscanf fopen freopen fclose fflush fread fwrite fgetc fgets fputc fputs getc getchar gets putc putchar puts ungetc
    fgetpos fseek fsetpos ftell rewind clearerr feof ferror perror remove rename tmpfile tmpnam setbuf setvbuf FILE
    fpos_t stdin stdout stderr EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam SEEK_CUR SEEK_END SEEK_SET TMP_MAX""".split()
_STDLIB = """abort abs atexit atof atoi atol atoll bsearch calloc div exit free getenv labs ldiv llabs lldiv malloc
    mblen mbstowcs mbtowc qsort rand realloc srand strtod strtof strtol strtold strtoll strtoul strtoull system wcstombs
    wctomb div_t ldiv_t lldiv_t EXIT_FAILURE EXIT_SUCCESS MB_CUR_MAX RAND_MAX""".split()
_STRING = """memchr memcmp memcpy memmove memset strcat strchr strcmp strcoll strcpy strcspn strerror strlen strncat
    strncmp strncpy strpbrk strrchr strspn strstr strtok strxfrm""".split()
_OTHER = """NULL size_t ptrdiff_t wchar_t SIZE_MAX PTRDIFF_MIN PTRDIFF_MAX SIG_ATOMIC_MIN SIG_ATOMIC_MAX
    WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX intmax_t uintmax_t intptr_t uintptr_t INTMAX_MIN INTMAX_MAX UINTMAX_MAX
    INTPTR_MIN INTPTR_MAX UINTPTR_MAX errno EDOM ERANGE EILSEQ clock time difftime mktime asctime ctime gmtime localtime
    strftime clock_t time_t CLOCKS_PER_SEC isalnum isalpha isblank iscntrl isdigit isgraph islower isprint ispunct
    isspace isupper isxdigit tolower toupper FLT_RADIX FLT_ROUNDS FLT_EVAL_METHOD DECIMAL_DIG main""".split()
# stdint.h's exact-, least- and fast-width types and their limit macros, float.h's FLT_/DBL_/LDBL_ limits
_PATTERNS = (r"u?int(_least|_fast)?(8|16|32|64)_t", r"U?INT(_LEAST|_FAST)?(8|16|32|64)_(MIN|MAX)",
             r"U?INT(8|16|32|64|MAX)_C", r"(FLT|DBL|LDBL)_[A-Z0-9_]+")

C_LIBRARY_NAMES = frozenset([*_MATH, *(n + s for n in _MATH for s in ("f", "l")), *_MATH_MACROS, *_STDIO, *_STDLIB,
                             *_STRING, *_OTHER])


def library_name(name: str) -> bool:
    """True when ``name`` is an identifier or macro of the C standard headers a generated header meets."""
    return name in C_LIBRARY_NAMES or any(re.fullmatch(p, name) for p in _PATTERNS)
