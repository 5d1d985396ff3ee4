// frugalml on an Arduino: predicts from analog reads with a generated model
// header, reading each analog input only when the model asks for it (an
// early-stopping model often stops after a few inputs), and prints
// "LABEL FEATURES_READ" per prediction on Serial, plus " COST" for kinds with
// feature costs (FM_REPORTS_COST), as `frugalml predict` does.
//
// Put next to this file: model.h (frugalml export-c MODEL -o model.h --target
// cortex-m0|cortex-m3|cortex-m4f) and the runtime, flat in this folder: every
// header of runtime_c/include/*/ (fm_cost_text.h, the COST column of costed
// kinds, among them), runtime_c/src/core/fm_common.c and the family's source
// (runtime_c/src/nb/fm_nb.c for NB models).
// A generated-code header (export-c --form code) needs only frugalml.h and
// fm_cost_text.h (no runtime source); it reads every input, then predicts.
// See README.md. Train on what the board reads: raw ADC counts (0..1023 on a
// 10-bit ADC), or change fm_feature_value() to the units you trained on.
#ifdef ARDUINO
#include <Arduino.h>
#else
#include "Arduino.h"  // the stand-in of check/ for builds without an Arduino core
#endif

#include "model.h"
#include "fm_cost_text.h"

#ifndef FM_MODEL_OBJECT
#define FM_MODEL_OBJECT model  // export-c --name (default "model")
#endif
#ifndef FM_PERIOD_MS
#define FM_PERIOD_MS 1000
#endif

// Analog pin of feature `index`: A0, A1, ... in the model's feature order.
// Edit for your wiring (the model may use fewer features than it declares).
static int fm_feature_pin(uint32_t index)
{
    return A0 + static_cast<int>(index);
}

// Feature value from a raw reading, in the units the model was trained on.
static float fm_feature_value(uint32_t index, int raw)
{
    (void)index;
    return static_cast<float>(raw);
}

// Lazy feature access for the runtime: one analogRead per feature asked for.
extern "C" int fm_read_analog(void *ctx, uint32_t index, float *value)
{
    (void)ctx;
    if (index >= FM_N_FEATURES) {
        return 1;
    }
    *value = fm_feature_value(index, analogRead(fm_feature_pin(index)));
    return 0;
}

// The model header defines a const struct of its family's type; overloads
// pick the family's lazy predict (NB models), the template falls back to reading every
// feature and predicting eagerly (any model kind).
#ifdef FM_NB_H // the header is an NB model's: its lazy predict reads inputs one by one
static inline int fm_predict_lazy(const fm_nb &m, const fm_reader *in, fm_result *out)
{
    return fm_nb_predict(&m, in, out);
}

static inline int fm_predict_lazy(const fm_nb_q15 &m, const fm_reader *in, fm_result *out)
{
    return fm_nb_q15_predict(&m, in, out);
}
#endif

// Every feature read, then the eager prediction (any kind and form).
static inline int fm_predict_eager(const fm_reader *in, fm_result *out)
{
    float x[FM_N_FEATURES];
    for (uint32_t i = 0; i < FM_N_FEATURES; ++i) {
        if (in->read(in->ctx, i, &x[i]) != 0) {
            return FM_E_READ;
        }
    }
    return FM_PREDICT_VEC(x, FM_N_FEATURES, out);
}

template <typename Model>
static inline int fm_predict_lazy(const Model &, const fm_reader *in, fm_result *out)
{
    return fm_predict_eager(in, out);
}

#ifdef FM_MODEL_FORM // export-c --form code: generated code, no model object, eager only
#define FM_PREDICT_READER(in, out) fm_predict_eager((in), (out))
#else
#define FM_PREDICT_READER(in, out) fm_predict_lazy(FM_MODEL_OBJECT, (in), (out))
#endif

void setup()
{
    Serial.begin(115200);
}

void loop()
{
    const fm_reader reader = {fm_read_analog, nullptr};
    fm_result r;
    const int rc = FM_PREDICT_READER(&reader, &r);
    if (!FM_ANSWERED(rc)) {  // FM_E_BUDGET (nothing fits) is an answer: label -1, as predict prints it
        Serial.print("error ");
        Serial.print(rc);
        Serial.print(": ");
        Serial.println(fm_strerror(rc));
    } else {
        Serial.print(FM_LABEL_TEXT(r.label));
        Serial.print(' ');
#if FM_REPORTS_COST
        char cost[FM_COST_TEXT_SIZE];
        Serial.print(static_cast<unsigned long>(r.n_read));
        Serial.print(' ');
        Serial.println(fm_cost_text(cost, FM_RESULT_COST(&r)));
#else
        Serial.println(static_cast<unsigned long>(r.n_read));
#endif
    }
    delay(FM_PERIOD_MS);
}
