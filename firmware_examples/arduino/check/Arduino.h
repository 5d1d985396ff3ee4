/*
 * A stand-in for the few Arduino core names the sketch uses, so that the
 * sketch compiles as C++ with arm-none-eabi-g++ without an Arduino core and
 * runs on a Cortex-M under QEMU: analogRead() returns the embedded test rows
 * of the model header (pin A0 + i gives feature i of the current row),
 * Serial prints over semihosting. Not for real boards.
 */
#ifndef FM_ARDUINO_STANDIN_H
#define FM_ARDUINO_STANDIN_H

#include <stdint.h>

extern "C" {
#include "semihost.h"
}

enum { A0 = 14 };

int analogRead(int pin);
void delay(unsigned long ms);

class FmSerial {
public:
    void begin(unsigned long) {}
    void print(const char *s) { sh_write0(s); }
    void print(char c) { const char s[2] = {c, '\0'}; sh_write0(s); }
    void print(long v);
    void print(unsigned long v);
    void print(int v) { print(static_cast<long>(v)); }
    template <typename T> void println(T v) { print(v); sh_write0("\n"); }
};

extern FmSerial Serial;

#endif /* FM_ARDUINO_STANDIN_H */
