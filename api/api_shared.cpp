// libddpsim.so's own translation unit: the library is ddpsim_api's objects
// (linked whole), exporting what libddpsim.map names.
#include "ddpsim/ddpsim.hpp"
