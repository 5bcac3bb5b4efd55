function test_linear_order()
%TEST_LINEAR_ORDER  MATLAB's linear indices with repeats, against Octave's own indexing: maxunpool is
% Z = zeros(n); Z(indx) = X (the last repeat wins), maxpool_backward is dX(indx) += dY (repeats add up), and
% maxunpool_backward is dZ(indx). The repeats straddle the middle of the output, where poolkit's threads split it.
sz = [6 8 3 5];
n = prod(sz);
mid = floor(n / 2);
indx = [mid, mid + 1, 3, mid, n, 1, mid + 1, 3, n, mid - 1, mid, 2];
for cls = {'double', 'single'}
  X = cast([10 -20 30 40 50 60 70 80 90 100 110 120], cls{1});
  Z = zeros(sz, cls{1});
  Z(indx) = X;
  check(isequal(poolkit.maxunpool(X, indx, sz), Z), ['maxunpool with repeated indices, ' cls{1}]);
  dX = reshape(cast(accumarray(indx(:), double(X(:)), [n 1]), cls{1}), sz);
  check(isequal(poolkit.maxpool_backward(X, indx, sz), dX), ['maxpool_backward with repeated indices, ' cls{1}]);
  dZ = cast(reshape(1:n, sz), cls{1});
  check(isequal(poolkit.maxunpool_backward(dZ, indx), dZ(indx)), ['maxunpool_backward, ' cls{1}]);
end
end
