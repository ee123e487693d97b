/* utf8.c — UTF-8 decoding and terminal display width, for the lexer (which rejects
 * source text that is not UTF-8, as CPython does) and for diagnostics (which place
 * the caret by display column, so a CJK character or an emoji before the error does
 * not shift it).
 *
 * Widths follow wcwidth(3) closely enough for carets: East Asian Wide and Fullwidth
 * characters and emoji take two columns, combining marks and zero-width joiners none,
 * everything else one.  The tables are ranges from Unicode 15's EastAsianWidth.txt and
 * the Mn/Me general categories, reduced to the blocks that occur in source text; a
 * character missing from them is off by one column at worst. */
#include "base.h"

int ts_utf8_decode(const char *s, const char *end, uint32_t *cp) {
  const unsigned char *p = (const unsigned char *)s;
  size_t avail = (size_t)(end - s);
  if (avail == 0) return 0;
  unsigned c0 = p[0];
  if (c0 < 0x80) {
    *cp = c0;
    return 1;
  }
  int n;
  uint32_t v, min;
  if (c0 >= 0xC2 && c0 <= 0xDF) { /* C0/C1 would be overlong forms of ASCII */
    n = 2, v = c0 & 0x1F, min = 0x80;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    n = 3, v = c0 & 0x0F, min = 0x800;
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    n = 4, v = c0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (avail < (size_t)n) return 0;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3F);
  }
  /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8. */
  if (v < min || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
  *cp = v;
  return n;
}

size_t ts_utf8_invalid(const char *s, size_t n) {
  const char *p = s, *end = s + n;
  uint32_t cp;
  while (p < end) {
    if ((unsigned char)*p < 0x80) {
      p++;
      continue;
    }
    int k = ts_utf8_decode(p, end, &cp);
    if (!k) return (size_t)(p - s);
    p += k;
  }
  return n;
}

typedef struct CpRange {
  uint32_t lo, hi;
} CpRange;

static bool in_ranges(uint32_t cp, const CpRange *r, int n) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (cp < r[mid].lo) hi = mid - 1;
    else if (cp > r[mid].hi) lo = mid + 1;
    else return true;
  }
  return false;
}

/* Combining marks (general categories Mn, Me) and format characters that draw nothing. */
static const CpRange zero_width[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2},
    {0x05C4, 0x05C5}, {0x05C7, 0x05C7}, {0x0610, 0x061A}, {0x064B, 0x065F}, {0x0670, 0x0670},
    {0x06D6, 0x06DC}, {0x06DF, 0x06E4}, {0x06E7, 0x06E8}, {0x06EA, 0x06ED}, {0x0900, 0x0902},
    {0x093A, 0x093A}, {0x093C, 0x093C}, {0x0941, 0x0948}, {0x094D, 0x094D}, {0x0951, 0x0957},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
    {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF}, {0x302A, 0x302D},
    {0x3099, 0x309A}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0x1F3FB, 0x1F3FF},
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xE0100, 0xE01EF},
};

/* East Asian Wide (W) and Fullwidth (F), emoji presentation included. */
static const CpRange wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x3247},   {0x3250, 0x4DBF},   {0x4E00, 0xA4CF},   {0xA960, 0xA97F},
    {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF},
    {0x1AFF0, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E},
    {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335},
    {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3},
    {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F3FA}, {0x1F400, 0x1F43E},
    {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E},
    {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4},
    {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2},
    {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC},
    {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945},
    {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

int ts_char_width(uint32_t cp) {
  if (cp < 0x300) return 1; /* ASCII and Latin: the common case, no search */
  if (in_ranges(cp, zero_width, TS_ARRAY_LEN(zero_width))) return 0;
  if (in_ranges(cp, wide, TS_ARRAY_LEN(wide))) return 2;
  return 1;
}

/* Non-ASCII characters that are certainly not XID_Continue (Python identifiers are
 * NFKC-normalised XID_Start XID_Continue*): Latin-1 punctuation, general punctuation
 * and spaces, arrows, mathematical operators and other symbols, CJK punctuation,
 * fullwidth punctuation, private use, specials and emoji.  Letters of every script are
 * outside these ranges.  Connector punctuation (U+203F, U+2040, U+2054, U+FF3F) and
 * U+00B7 are identifier characters and are left out. */
static const CpRange not_identifier[] = {
    {0x0080, 0x00A9}, {0x00AB, 0x00B4}, {0x00B6, 0x00B6}, {0x00B8, 0x00B9}, {0x00BB, 0x00BF},
    {0x00D7, 0x00D7}, {0x00F7, 0x00F7}, {0x1680, 0x1680}, {0x2000, 0x203E}, {0x2041, 0x2053},
    {0x2055, 0x206F}, {0x2190, 0x2BFF}, {0x3000, 0x3004}, {0x3008, 0x3020}, {0xE000, 0xF8FF},
    {0xFE10, 0xFE19}, {0xFEFF, 0xFEFF}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF20}, {0xFF3B, 0xFF3E},
    {0xFF40, 0xFF40}, {0xFF5B, 0xFF65}, {0xFFF0, 0xFFFF}, {0x1F000, 0x1FBFF},
};

bool ts_char_is_identifier(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') || cp == '_';
  return !in_ranges(cp, not_identifier, TS_ARRAY_LEN(not_identifier));
}

bool ts_char_is_printable(uint32_t cp) {
  /* Python's str.isprintable: separators (Zs, Zl, Zp) and format characters are not. */
  static const CpRange unprintable[] = {
      {0x0000, 0x001F}, {0x007F, 0x00A0}, {0x00AD, 0x00AD}, {0x1680, 0x1680}, {0x2000, 0x200F},
      {0x2028, 0x202F}, {0x205F, 0x2064}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF},
  };
  return !in_ranges(cp, unprintable, TS_ARRAY_LEN(unprintable));
}
