// Octave's native entry for pkmex: the same call as the MEX entry (pkmex.cpp's run, compiled with PKMEX_OCTAVE
// over mx_octave.hpp), with arguments and outputs that are Octave arrays, so no output is copied on return.
// build.m builds it as +poolkit/pkmex.oct under Octave; MATLAB builds the MEX entry.
#include <cstdio>
#include <memory>
#include <vector>

#include "pkmex.hpp"

DEFUN_DLD(pkmex, args, nargout, "pkmex(op, ...): poolkit's MATLAB interface; call it through the +poolkit functions.") {
  char id[64] = "", message[1024] = "";
  {
    std::vector<std::unique_ptr<pkmex::mxArray>> in;
    std::vector<const pkmex::mxArray*> prhs;
    for (int i = 0; i < args.length(); ++i) {
      in.push_back(std::make_unique<pkmex::mxArray>(args(i)));
      prhs.push_back(in.back().get());
    }
    int nlhs = nargout < 1 ? 1 : nargout;
    std::vector<pkmex::mxArray*> plhs(size_t(nlhs) + 2, nullptr);  // room for every output an operation makes
    pkmex::MexError err;
    if (pkmex::run(nlhs, plhs.data(), int(prhs.size()), prhs.data(), err)) {
      octave_value_list out;
      for (int i = 0; i < int(plhs.size()) && plhs[i]; ++i) {
        std::unique_ptr<pkmex::mxArray> a(plhs[i]);
        if (i < nlhs) out(i) = a->value();
      }
      return out;
    }
    std::snprintf(id, sizeof id, "%s", err.id.c_str());
    std::snprintf(message, sizeof message, "%s", err.message.c_str());
  }  // every C++ object of the call is released before the error
  error_with_id(id, "%s", message);
}
