function check_close(got, want, tol, what)
%CHECK_CLOSE  Same size and class expectations; equal within tol (relative to max(1, |want|)); NaN matches NaN.
check(isequal(size(got), size(want)), '%s: size %s, expected %s', what, mat2str(size(got)), mat2str(size(want)));
g = double(got(:)); w = double(want(:));
same = (g == w) | (isnan(g) & isnan(w)) | abs(g - w) <= tol * max(1, abs(w));
check(all(same), '%s: %d of %d entries differ (first at %d: %g, expected %g)', what, nnz(~same), numel(same), ...
      find(~same, 1), g(find(~same, 1)), w(find(~same, 1)));
end
