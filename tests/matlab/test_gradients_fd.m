function test_gradients_fd()
%TEST_GRADIENTS_FD  The backward functions against central finite differences of L = sum(out .* G), in double:
% maxpool with overlapping windows and padding (both index forms), avgpool (PaddingValue 0 and 'mean', 'same'),
% and maxunpool with respect to its input (distinct indices: for repeated ones the scatter keeps the last value,
% while maxunpool_backward, dZ(indx), hands dZ to each).
randn('seed', 2);
X = randn(5, 6, 2, 2);
h = 1e-6;
o = {'Stride', [2 1], 'Padding', [1 0; 0 1], 'DataFormat', 'SSCB'};
[Y, I, s] = poolkit.maxpool(X, [3 2], o{:});
G = randn(size(Y));
fd = numeric_grad(@(x) dot_all(poolkit.maxpool(x, [3 2], o{:}), G), X, h);
check_close(poolkit.maxpool_backward(G, I, s), fd, 1e-6, 'maxpool');
[~, Ic, info] = poolkit.maxpool(X, [3 2], o{:}, 'Indices', 'compact');
check_close(poolkit.maxpool_backward(G, Ic, info), fd, 1e-6, 'maxpool compact');
for pv = {0, 'mean'}
  a = {'Stride', 2, 'Padding', 'same', 'DataFormat', 'SSCB', 'PaddingValue', pv{1}};
  Ya = poolkit.avgpool(X, 3, a{:});
  Ga = randn(size(Ya));
  fd = numeric_grad(@(x) dot_all(poolkit.avgpool(x, 3, a{:}), Ga), X, h);
  check_close(poolkit.avgpool_backward(Ga, size(X), 3, a{:}), fd, 1e-6, 'avgpool');
end
% maxunpool over windows that do not overlap (as MATLAB's unpooling layer requires): distinct indices
[Yt, It, st] = poolkit.maxpool(X, 2, 'Stride', 2, 'Padding', [1 0; 0 0], 'DataFormat', 'SSCB');
H = randn(size(X));
fd = numeric_grad(@(y) dot_all(poolkit.maxunpool(y, It, st), H), Yt, h);
check_close(poolkit.maxunpool_backward(H, It), fd, 1e-6, 'maxunpool');
end

function g = numeric_grad(f, x, h)
g = zeros(size(x));
for i = 1:numel(x)
  xp = x; xp(i) = xp(i) + h;
  xm = x; xm(i) = xm(i) - h;
  g(i) = (f(xp) - f(xm)) / (2 * h);
end
end

function v = dot_all(a, b)
v = sum(a(:) .* b(:));
end
