// Runs the sketch under QEMU: setup(), then loop() once per embedded row of
// model.h, with analogRead() serving that row; exit code 0.
#include "Arduino.h"

#include "model.h"

void setup();
void loop();

FmSerial Serial;

namespace {
uint32_t current_row = 0;

void print_unsigned(unsigned long v, bool negative)
{
    char buf[24];
    char *p = buf + sizeof buf;
    *--p = '\0';
    do {
        *--p = static_cast<char>('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    if (negative) {
        *--p = '-';
    }
    sh_write0(p);
}
}  // namespace

void FmSerial::print(long v)
{
    print_unsigned(v < 0 ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v), v < 0);
}

void FmSerial::print(unsigned long v)
{
    print_unsigned(v, false);
}

int analogRead(int pin)
{
    const uint32_t index = static_cast<uint32_t>(pin - A0);
    if (index >= FM_N_FEATURES) {
        return 0;
    }
    return static_cast<int>(FM_ROWS[current_row][index]);
}

void delay(unsigned long) {}

int main()
{
    setup();
    for (current_row = 0; current_row < FM_N_ROWS; ++current_row) {
        loop();
    }
    return 0;
}
