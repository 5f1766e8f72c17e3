// Every nn module, nn::functional and nn::init (torch/nn.h): one include for model code.
#pragma once

#include "kiln/nn/Activation.h"
#include "kiln/nn/BatchNorm.h"
#include "kiln/nn/Conv.h"
#include "kiln/nn/Dropout.h"
#include "kiln/nn/Embedding.h"
#include "kiln/nn/Functional.h"
#include "kiln/nn/Init.h"
#include "kiln/nn/Linear.h"
#include "kiln/nn/Loss.h"
#include "kiln/nn/Module.h"
#include "kiln/nn/ModuleHolder.h"
#include "kiln/nn/Normalization.h"
#include "kiln/nn/Pooling.h"
#include "kiln/nn/Sequential.h"
